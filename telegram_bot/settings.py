"""Configuration from the environment (pydantic-settings); see the README."""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
from urllib.parse import urlsplit

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

REAL_TELEGRAM = "https://api.telegram.org"
LOOPBACK = ("127.0.0.1", "localhost", "::1")


class Settings(BaseSettings):
    """Every knob of the bot process, read from environment variables of the same
    name (``BOT_TOKEN``, ``REDIS_URL``, ...)."""

    model_config = SettingsConfigDict(env_file=None, extra="ignore", case_sensitive=False)

    bot_token: str = ""
    """From @BotFather. Empty: the bot cannot run (``python -m telegram_bot`` says how)."""
    redis_url: str = ""
    """Empty: ``python -m telegram_bot`` refuses to start; ``durak bot`` embeds a redis-server."""
    redis_prefix: str = "durak:"
    redis_connections: int = Field(default=64, ge=2)
    """Connections in this process's Redis pool (callers wait for a free one)."""
    telegram_api_url: str = REAL_TELEGRAM
    """Another Bot API server: self-hosted, or the test double."""

    webhook_url: str = ""
    """Public HTTPS URL Telegram posts updates to; long polling when empty."""
    webhook_secret: str = Field(default="", pattern=r"^[A-Za-z0-9_-]{0,256}$")
    """Checked in the ``X-Telegram-Bot-Api-Secret-Token`` header of every update
    (Telegram allows 1-256 of ``A-Z a-z 0-9 _ -``); empty: derived from the token,
    see :meth:`secret_token`."""
    webhook_host: str = "0.0.0.0"
    webhook_port: int = Field(default=8080, ge=1, le=65535)
    webhook_path: str = "/telegram"

    # ---- the Mini App (#42) -----------------------------------------------
    miniapp_url: str = ""
    """Public HTTPS URL of the Mini App's page (the live table, #42); empty: the
    Mini App is off and no button points to it.  A table's page is this URL
    with ``?t=<table id>``; without a table, the user's lobbies and games (the
    private chat's menu button)."""
    miniapp_short_name: str = Field(default="", pattern=r"^(?:[A-Za-z0-9_]{3,30})?$")
    """The Mini App's short name registered with @BotFather (``/newapp``): a
    group's table message links to ``https://t.me/<bot>/<short name>?startapp=<table
    id>``, which opens the table in the group; empty: that button opens the
    private chat instead, whose message carries the ``web_app`` button."""
    # the Mini App's server (#42): where the page is served, its init data's
    # age, Telegram's script, who may frame it, a player's page moves
    miniapp_port: int = Field(default=0, ge=0, le=65535)
    """Long polling: the port of the Mini App's server (its page, static files
    and live channel) on ``MINIAPP_HOST``; 0: none.  In webhook mode the page
    is served by the webhook's own server, under ``MINIAPP_PATH``."""
    miniapp_host: str = "0.0.0.0"
    miniapp_path: str = Field(default="/app", pattern=r"^/[A-Za-z0-9_/-]*[A-Za-z0-9_-]$")
    """Where the page is served: ``<path>/`` the page, ``<path>/static/`` its
    files, ``<path>/live`` its WebSocket (the public ``MINIAPP_URL`` points at
    ``<path>/`` through the HTTPS proxy in front)."""
    miniapp_init_data_max_age: float = Field(default=86400.0, gt=0)
    """Seconds a page's ``initData`` is accepted after its ``auth_date``
    (Telegram signs it when the app opens; a reconnect sends the same)."""
    telegram_web_app_js: str = "https://telegram.org/js/telegram-web-app.js"
    """Telegram's script, as the page loads it (the sandbox serves a stand-in)."""
    miniapp_frame_ancestors: str = ""
    """Origins besides Telegram's web clients that may frame the page (space
    separated; the sandbox's page)."""
    miniapp_moves: int = Field(default=10, ge=1)
    miniapp_moves_window: float = Field(default=2.0, gt=0)
    """A player's page moves: at most ``miniapp_moves`` in any
    ``miniapp_moves_window`` seconds, over every bot process (one script on his
    window in Redis; per process while Redis does not answer); the rest are
    refused."""
    miniapp_page_ttl: float = Field(default=30.0, gt=0)
    """Seconds an open page's presence lives in Redis without its process's
    renewal (every third of it): while a player's page is open on any process
    his hand message is not edited on every move; a process that died leaves
    his pages to expire, and his hand is drawn again (#42 point 6)."""
    # ---- end of the Mini App's settings -----------------------------------

    default_timer: int = 60
    """Turn timer of a new lobby in seconds (0, 30, 60 or 120); 0 (none) holds
    for casual games only: a rated lobby then gets 60 (#38)."""
    ai_takeover_timeouts: int = Field(default=2, ge=1)
    """Consecutive timeouts before the AI takes a player's seat."""
    rated_after_games: int = Field(default=5, ge=0)
    """#38: a rated game counts for a player once he has finished this many
    games with other people ... (docs/RATINGS.md)"""
    rated_after_days: float = Field(default=2.0, ge=0)
    """... and the first of them is this many days old."""
    rated_diversity_opponents: int = Field(default=3, ge=0)
    """#38, the opponent-diversity guard: two players' rated result counts
    against each other only if each finished games with at least this many
    other people besides the other one ... (0: no such guard; docs/RATINGS.md)"""
    rated_diversity_days: float = Field(default=7.0, ge=0)
    """... in the last this many days (0: no such guard)."""
    rating_log_maxlen: int = Field(default=100_000, ge=1000)
    """Entries each stream of the ratings log keeps (approximately)."""
    timer_interval: float = Field(default=0.5, gt=0)
    """Seconds between two looks at the due turn timers."""
    loop_backoff_base: float = Field(default=0.5, gt=0)
    loop_backoff_cap: float = Field(default=10.0, gt=0)
    """A background loop (timers, notify subscriber) that failed runs again after
    ``base`` seconds, doubled per failure up to ``cap``."""
    solo_opponents: int = Field(default=2, ge=1, le=5)
    """AI opponents of /play."""
    ai_workers: int = Field(default_factory=lambda: min(2, os.cpu_count() or 1), ge=0)
    """Processes that compute the hard AI's moves (the search player), off the
    event loop; 0: on the event loop (tables.deciders)."""

    soon_delay: float = 1.0
    """The messages of the players the game waits for are updated within about
    this long (coalesced)."""
    later_delay: float = 2.0
    """The messages of players who only watch a move: at most this often."""
    table_delay: float = 4.0
    """The group's table message at most this often: 4 s leaves room in a
    group's minute for every other message (#28; every 3 s it alone took the
    20 Telegram allows, and a lobby message sent then drew a 429)."""
    later_delay_in_group: float = Field(default=6.0, gt=0)
    """The hand of a player who only watches the move, when it is in the group
    (an ephemeral message): at most this often, and it holds back for the
    group's reserve as long (#24: every write counts in the group's minute;
    the moment he must act his hand goes within ``soon_delay``)."""
    table_delay_in_group: float = Field(default=12.0, gt=0)
    """The group's table message at most this often while a player's hand is in
    the group (#24): his own view is enough to play, every write counts in the
    group's minute, and the table's edits -- for the onlookers -- were 0.8 of a
    group's 3 writes a move; it also holds back for the minute's reserve as long
    (the game's result is shown at once)."""
    flood_hint_after: float = Field(default=4.0, gt=0)
    """Seconds a player's hand in the group may wait for the group's flood limit
    (beyond the delays above) before he is told, once per game, that in a private
    chat his cards update at once (#24; :mod:`telegram_bot.delivery.held`)."""
    render_grace: float = Field(default=10.0, gt=0)
    """Seconds a pending render's mark in Redis waits for its process (which
    keeps it alive meanwhile) before any bot process renders the table again:
    a process that dies between a write and its render loses no update
    (:mod:`telegram_bot.state.pending_renders`)."""
    render_shards: int = Field(default=4, ge=1)
    """Redis slots the pending-render marks are spread over (each one swept every
    ``render_grace / 4`` seconds by one of the live processes, #39)."""
    press_reply_window: float = Field(default=10.0, gt=0)
    """Seconds after a press arrives that an ephemeral reply (*My cards*) is still
    tied to it; later it goes out untied (Telegram refuses a reply to a press
    older than 15 s, #28)."""
    poll_lease_ttl: float = Field(default=10.0, gt=0)
    """Long polling: seconds the fleet's poll lease outlives a process that died
    holding it (one poller at a time, #28); renewed every third of it."""
    flood_limiter: bool = True
    """Outgoing calls wait on token buckets in Redis shared by all bot processes."""
    flood_overall_limit: int = Field(default=30, ge=2)
    flood_overall_window: float = Field(default=1.5, gt=0)
    """Messages (sends and edits) the whole fleet of bot processes allows itself
    in any ``flood_overall_window`` seconds (#28): Telegram's ceiling is about
    30 in any second per bot; the longer window leaves room for the moment
    between counting a message and its arrival.  Raise the limit only for a
    bot Telegram allows more (paid broadcasts)."""
    flood_ephemeral_counted: bool = True
    """The starting assumption for a group whose budget nothing has taught yet
    (#24): ephemeral messages (hands shown in the group) count against the
    group's ~20 messages a minute like any other (Telegram does not say).
    False: they count apart, about one a second per group; a 429 that shows
    otherwise switches that group to counted, fleet-wide (``telegram_bot.state.budgets``)."""
    telegram_time_scale: float = Field(default=1.0, gt=0)
    """Tests and the sandbox only: Telegram's time runs this many times faster
    (#37) -- the flood windows, the groups' learned budgets, the coalescing
    delays and gaps and a 429's ``retry_after`` are read on a clock
    ``telegram_time_scale`` times as fast, and slept out in
    ``1 / telegram_time_scale`` of the time.  A press's answer window stays in
    real seconds (it bounds a latency, not a rate).  The fake Bot API must run
    on the same scale (``FakeTelegram(time_scale=...)``).  Against the real
    Telegram (the default ``telegram_api_url``) only 1 is accepted."""
    update_dedupe: bool = True
    """Claim every update in Redis before any handler runs, so a redelivered one
    (a webhook retry, another bot process) is handled once
    (:mod:`telegram_bot.state.dedupe`)."""
    update_dedupe_ttl: float = Field(default=600.0, gt=0)
    """Seconds an update's claim is remembered."""
    set_commands: bool = True
    """Publish the command menus (setMyCommands) at start-up."""
    shutdown_timeout: float = Field(default=20.0, gt=0)
    """Seconds a stop (SIGTERM, as a deploy sends, or Ctrl-C) may take: the updates
    in hand finish, the turn timers are handed over to the other processes and the
    pending edits go out -- inside the ~30 s a supervisor waits before SIGKILL."""

    @model_validator(mode="after")
    def _real_telegram_keeps_real_time(self) -> Settings:
        if self.telegram_time_scale != 1 and self.telegram_api_url == REAL_TELEGRAM:
            raise ValueError(
                "TELEGRAM_TIME_SCALE is for the fake Bot API: Telegram's own limits "
                "run in real time (set TELEGRAM_API_URL, or leave the scale at 1)"
            )
        return self

    @model_validator(mode="after")
    def _miniapp_url_is_https(self) -> Settings:
        """Telegram opens only an HTTPS Mini App; plain HTTP on loopback is for
        the fake Bot API (the sandbox, tests)."""
        url = self.miniapp_url
        if not url:
            return self
        parts = urlsplit(url)
        local = parts.scheme == "http" and parts.hostname in LOOPBACK
        if not parts.hostname or (parts.scheme != "https" and not local):
            raise ValueError(f"MINIAPP_URL must be an HTTPS URL, not {url!r}")
        if local and self.telegram_api_url == REAL_TELEGRAM:
            raise ValueError("MINIAPP_URL: Telegram opens only an HTTPS Mini App")
        return self

    def secret_token(self) -> str:
        """The webhook's secret token: ``WEBHOOK_SECRET``, or when unset one derived
        from the bot token (HMAC-SHA256, base64url) -- never an unchecked webhook,
        and every process of the bot derives the same one."""
        if self.webhook_secret:
            return self.webhook_secret
        mac = hmac.new(self.bot_token.encode(), b"durak-bot webhook secret", hashlib.sha256)
        return base64.urlsafe_b64encode(mac.digest()).decode().rstrip("=")
