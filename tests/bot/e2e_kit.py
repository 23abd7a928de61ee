"""End-to-end kit: the real dispatcher (long polling) against the fake Bot API and
a real Redis, simulated players that press buttons of their hand messages, and
the check that no message to a player ever shows another player's hidden card."""

from __future__ import annotations

import asyncio
import contextlib
import random
import re
import time
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from engine import Action, new_game
from engine.cards import card_name
from sandbox.fake_api import FakeTelegram, Message, SimUser
from sandbox.fake_api.world import World
from tables import MOVE_KINDS, OVER, TableService
from telegram_bot.app import BotApp
from telegram_bot.buttons.callbacks import LobbyCb, LobbyOp, parse_game
from telegram_bot.settings import Settings
from telegram_bot.state.chat_state import ChatStateStore
from telegram_bot.views.hand import PLAYABLE
from telegram_bot.views.i18n import HELP_MOVES, LANGUAGES, Translator

SAFETY = 60.0  # seconds: a hung test fails, never a timing assertion
TELEGRAM_SCALE = 10.0
"""Telegram's time in the games played at its pace (#37): the fake Bot API
(``FakeTelegram(time_scale=...)``) and the bot (``telegram_time_scale``) both
run their windows, delays and ``retry_after`` this many times faster -- a
group's 20 messages a minute in 6 s -- with the same decisions.  Not more: the
windows' margins (a second of a group's or a chat's window) must still cover
a loaded machine's own latency between two processes (at 30, 33 ms did not:
an edit's lease lapsed in flight, a 400 "not modified")."""


class TestClock:
    """The service's clock: real time plus an offset the test moves forward."""

    __test__ = False

    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset

    def advance(self, seconds: float) -> None:
        self.offset += seconds


@dataclass
class Bot:
    """One running bot process (dispatcher + background tasks)."""

    app: BotApp
    task: asyncio.Task[None]

    @property
    def svc(self) -> TableService:
        return self.app.svc


@dataclass
class Harness:
    fake: FakeTelegram
    redis_url: str
    prefix: str
    clock: TestClock = field(default_factory=TestClock)
    bot: Bot | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def settings(self) -> Settings:
        """The test's settings: no turn timer, fast delays (``extra`` overrides)."""
        values: dict[str, Any] = {
            "default_timer": 0,
            "timer_interval": 0.05,
            "soon_delay": 0.0,
            "later_delay": 0.0,
            "table_delay": 0.1,
            "rated_after_games": 0,  # every account established (#38)
            "rated_after_days": 0,
            "rated_diversity_opponents": 0,  # nor the opponent-diversity guard
        }
        values.update(self.extra)
        return Settings(
            bot_token=self.fake.token,
            redis_url=self.redis_url,
            redis_prefix=self.prefix,
            telegram_api_url=self.fake.url,
            **values,
        )

    async def start(self) -> Bot:
        app = BotApp(self.settings(), clock=self.clock)
        await app.setup()
        task = asyncio.create_task(app.run_polling(handle_signals=False, polling_timeout=5))
        self.bot = Bot(app, task)
        return self.bot

    async def stop(self) -> None:
        if self.bot is None:
            return
        app, task = self.bot.app, self.bot.task
        self.bot = None
        await app.stop_polling()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(task, SAFETY)
        await app.aclose()

    async def restart(self) -> Bot:
        await self.stop()
        return await self.start()

    @property
    def svc(self) -> TableService:
        assert self.bot is not None
        return self.bot.svc

    @property
    def ui(self) -> ChatStateStore:
        assert self.bot is not None
        return self.bot.app.ui

    async def wait_hands(self, tid: str, users: Iterable[SimUser]) -> None:
        """Until every user's hand message is recorded."""
        deadline = time.monotonic() + SAFETY
        while True:
            hands = (await self.ui.table(tid)).hands
            if all(u.id in hands for u in users):
                return
            assert time.monotonic() < deadline, "hand messages never recorded"
            await asyncio.sleep(0.02)

    async def hand_message(self, user: SimUser, tid: str | None = None) -> Message | None:
        """The user's current hand message at table ``tid`` (default: where he sits)."""
        if tid is None:
            table = await self.svc.tables.where(user.id)
            if table is None:
                return None
            tid = table.id
        mid = (await self.ui.table(tid)).hands.get(user.id)
        if mid is not None and mid < 0:  # his hand in the group, as he was shown it
            table = await self.svc.lobbies.lobby(tid)
            assert table.chat is not None
            return self.fake.world.chat(table.chat).ephemeral_shown.get(-mid)
        return user.chat.messages.get(mid) if mid is not None else None


@contextlib.asynccontextmanager
async def running(
    redis_url: str, prefix: str, fake: FakeTelegram, **extra: Any
) -> AsyncIterator[Harness]:
    h = Harness(fake, redis_url, prefix, extra=extra)
    await h.start()
    try:
        yield h
    finally:
        await h.stop()


# ------------------------------------------------------------------ players
def has_lobby_buttons(message: Message) -> bool:
    return any(b.get("callback_data", "").startswith("l:") for b in message.buttons)


def has_game_buttons(message: Message) -> bool:
    """A hand message: game buttons, or only greyed (disabled) cards while he
    can play none of them."""
    return bool(game_buttons(message)) or any("disabled" in b for b in message.buttons)


def op(code: str, what: LobbyOp) -> str:
    return LobbyCb(code=code, op=what).pack()


def game_buttons(message: Message) -> list[dict[str, Any]]:
    return [b for b in message.buttons if parse_game(b.get("callback_data")) is not None]


def choose(message: Message, rng: random.Random | None = None) -> dict[str, Any] | None:
    """The button a simple player presses: Play, a choice, a playable card, Done or
    Pass, Take (in that order); None when nothing can be done now."""
    buttons = game_buttons(message)
    by: dict[str, list[dict[str, Any]]] = {"play": [], "choice": [], "card": [], "P": [], "K": []}
    for b in buttons:
        cb = parse_game(b["callback_data"])
        assert cb is not None
        p = cb.press
        if p.kind == "play":
            by["play"].append(b)
        elif p.kind == "action" and p.action in ("P", "K"):
            by[p.action].append(b)
        elif p.kind == "action":
            by["choice"].append(b)
        elif p.kind == "card" and b["text"].startswith(PLAYABLE):
            by["card"].append(b)
    for kind in ("play", "choice", "card", "P", "K"):
        if by[kind]:
            return rng.choice(by[kind]) if rng else by[kind][0]
    return None


async def press(user: SimUser, message: Message, button: dict[str, Any]) -> dict[str, Any]:
    q = user.press(data=button["callback_data"], message=message)
    return await q.wait_answer(SAFETY)


async def game_over(h: Harness, tid: str) -> bool:
    """Is the table's game over?  (A hand shown in the group is deleted then: the
    group's table message tells the result, #29.)"""
    table, state, _v = await h.svc.tables.get(tid)
    return table.status == OVER or (state is not None and state.over)


def is_over(message: Message | None) -> bool:
    return message is not None and any(
        b.get("callback_data", "").startswith("l:") and ":re" in b.get("callback_data", "")
        for b in message.buttons
    )


def shows_result(message: Message | None) -> bool:
    """``message`` shows a game's result: with *Rematch* (:func:`is_over`), or --
    an arena's table has none (#38) -- with *Check the deal*, which only a
    result carries."""
    return is_over(message) or (
        message is not None
        and any(
            b.get("callback_data", "").startswith("rp:")
            and b.get("callback_data", "").endswith(":c")
            for b in message.buttons
        )
    )


def _gone(message: Message) -> bool:
    """``message`` was deleted (a hand in the group goes when the game is over, #29)."""
    chat = message.chat
    if message.ephemeral_message_id is not None:
        return message.ephemeral_message_id not in chat.ephemeral
    return chat.messages.get(message.message_id) is not message


async def _edited(world: World, message: Message, shown: int, within: float) -> None:
    """Until ``message`` is edited after version ``shown``, or deleted (at most
    ``within`` s: a press answered without a change of his message -- the
    last move deletes a hand in the group -- waited it all out, #37)."""
    with contextlib.suppress(TimeoutError):
        await world.wait_for(lambda: message.version != shown or _gone(message) or None, within)


async def settle(h: Harness, quiet: float = 0.3) -> None:
    """Until nothing changed in the fake for ``quiet`` seconds: the edits of the
    presses answered so far have gone out (a press is answered first)."""
    world = h.fake.world
    deadline = time.monotonic() + SAFETY
    while time.monotonic() < deadline:
        seen = world.version

        def moved(v: int = seen) -> bool | None:
            return world.version != v or None

        try:
            await world.wait_for(moved, quiet)
        except TimeoutError:
            return
    raise AssertionError("the fake never became quiet")


async def play_out(
    h: Harness,
    tid: str,
    humans: list[SimUser],
    *,
    rng: random.Random | None = None,
    max_presses: int = 3000,
    stop_after: int | None = None,
    after_press: Callable[[SimUser], Awaitable[None]] | None = None,
) -> int:
    """Press buttons for the humans until every hand message shows the game over
    (or ``stop_after`` presses); returns the number of presses.  ``after_press``
    is awaited with the presser once each press is answered."""
    world = h.fake.world
    answers: Counter[str] = Counter()
    presses = 0
    idle_since = time.monotonic()
    while presses < max_presses:
        if stop_after is not None and presses >= stop_after:
            await settle(h)  # a press is answered before its edits go out
            return presses
        seen_version = world.version
        msgs = {u.id: await h.hand_message(u, tid) for u in humans}
        if all(shows_result(m) or m is None for m in msgs.values()) and (
            any(msgs.values()) or await game_over(h, tid)  # hands in the group go (#29)
        ):
            return presses
        acted = False
        for u in humans:
            m = msgs[u.id]
            if m is None or shows_result(m):
                continue
            b = choose(m, rng)
            if b is None:
                continue
            t0 = time.perf_counter()
            shown = m.version
            answer = await press(u, m, b)
            TIMING["press"] += time.perf_counter() - t0
            if after_press is not None:
                await after_press(u)
            # a press is answered before its edit goes out (which may wait for the
            # chat's flood tokens): look again once his message shows the outcome
            # -- it always does for a silent answer; a stale press redraws it
            await _edited(world, m, shown, SAFETY if answer.get("text") is None else 5.0)
            answers[str(answer.get("text"))] += 1
            presses += 1
            acted = True
            break
        if acted:
            idle_since = time.monotonic()
            continue
        TIMING["waits"] += 1
        if time.monotonic() - idle_since > SAFETY:
            state = {
                u.id: (m.text, m.button_texts) if m else None
                for u, m in zip(humans, msgs.values(), strict=True)
            }
            raise AssertionError(f"nobody can move and nothing changes: {state}")
        with contextlib.suppress(TimeoutError):  # UI records are no world change: look again

            def moved(v: int = seen_version) -> bool | None:
                return world.version != v or None

            await world.wait_for(moved, 0.5)
    raise AssertionError(f"the game did not end in {max_presses} presses: {answers}")


# ------------------------------------------------------------------ hidden cards
_CARD_RE = re.compile(r"(10|[2-9JQKAВДКТ])([♠♥♦♣])|🃏")
_SUITS = {"♣": "C", "♦": "D", "♥": "H", "♠": "S"}
_FACES = {"В": "J", "Д": "Q", "К": "K", "Т": "A"}
"""Face ranks as Russian and Ukrainian messages show them."""


def cards_in(text: str) -> set[str]:
    out = set()
    for m in _CARD_RE.finditer(text):
        rank = _FACES.get(m.group(1), m.group(1)) if m.group(1) else ""
        out.add("JK" if m.group(0) == "🃏" else rank + _SUITS[m.group(2)])
    return out


async def seen_cards(svc: TableService, table_id: str) -> dict[int, set[str]]:
    """Per user: every card he may legitimately have seen in this table's games --
    public ones (played, the trump card) and his own (dealt, drawn, picked up);
    key ``SPECTATOR``: the public ones alone, all anyone not seated may see.
    Rebuilt by replaying the table's event log from each game's seed."""
    table, _state, _v = await svc.tables.get(table_id)
    events = await svc.admin.event_page(table_id, 0, 100_000)
    starts = [i for i, e in enumerate(events) if e.kind == "start"]
    seen: dict[int, set[str]] = {s.user: set() for s in table.seats if s.user is not None}
    public: set[str] = set()
    loser: int | None = None
    seeds = await _game_seeds(svc, table_id, len(starts))
    for n, i in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(events)
        state = new_game(table.variant, len(table.seats), seeds[n], table.options, loser)
        for seat, s in enumerate(table.seats):
            if s.user is not None:
                seen[s.user] |= {card_name(c) for c in state.hand(seat)}
        if state.trump_card is not None:
            public.add(card_name(state.trump_card))
        for e in events[i:end]:
            if e.kind in MOVE_KINDS:
                for ev in state.apply(Action.from_text(e.seat, e.text)):
                    names = {card_name(c) for c in ev.cards}
                    if ev.kind == "draw":
                        user = table.seats[ev.seat].user
                        if user is not None:
                            seen[user] |= names
                    else:
                        public |= names
        loser = state.loser
    return {**{u: s | public for u, s in seen.items()}, SPECTATOR: public}


async def _game_seeds(svc: TableService, table_id: str, games: int) -> list[int]:
    table, _s, _v = await svc.tables.get(table_id)
    recorded: list[int] = SEEDS.get(table_id, [])
    if len(recorded) >= games:
        return recorded[:games]
    return [*recorded, table.seed][-games:] if games else []


SPECTATOR = 0
"""The key of the public cards in :func:`seen_cards` (no Telegram user has id 0)."""
TIMING: defaultdict[str, float] = defaultdict(float)
"""Seconds spent pressing and the number of idle waits (diagnostics)."""
SEEDS: dict[str, list[int]] = {}
"""Game seeds by table, recorded by :func:`record_seeds` (the table keeps only the
current game's seed)."""


def record_seeds(svc: TableService) -> None:
    """Make the service remember the seed of every game it starts, per table
    (its games part's ``start``, ``rematch`` and -- at a rematch offer's end,
    #38 -- ``rematch_due`` are the only ways a game starts; a rematch press
    may only say yes to an offer, starting nothing)."""
    for name in ("start", "rematch", "rematch_due"):
        original = getattr(svc.games, name)

        async def recorded(*args: Any, _original: Any = original, **kwargs: Any) -> Any:
            result = await _original(*args, **kwargs)
            if any(e.kind == "start" for e in result.events):
                SEEDS.setdefault(result.table_id, []).append(result.table.seed)
            return result

        setattr(svc.games, name, recorded)


async def assert_no_hidden_cards(
    h: Harness, table_id: str, users: Iterable[SimUser], skip: Iterable[str] = ()
) -> int:
    """Every text and button the bot ever showed these users -- in any chat, its
    ephemeral messages included: whoever the fake's ``visible_to`` says was shown
    it -- holds only cards they may have seen (a user not seated -- a spectator --
    only public ones); returns how many were checked."""
    seen = await seen_cards(h.svc, table_id)
    checked = 0
    ids = {u.id for u in users}
    for entry in h.fake.world.outbox:
        for viewer in entry["visible_to"]:
            if viewer in ids:  # a user not seated: public cards only
                checked += _check_entry(entry, viewer, seen.get(viewer, seen[SPECTATOR]), skip)
    return checked


def _static_examples() -> list[str]:
    """/help's fixed paragraph on moves, whose example buttons (``↪ 9♦``) name a
    card that no game dealt: taken out of a text before it is checked."""
    return [Translator(locale)(HELP_MOVES) for locale in LANGUAGES]


def _check_entry(entry: dict[str, Any], viewer: int, seen: set[str], skip: Iterable[str]) -> int:
    """1 when ``viewer`` was shown only cards he may have seen, 0 when skipped."""
    text = entry["text"] or ""
    for example in _static_examples():
        text = text.replace(example, "")
    if any(s in text for s in skip):
        return 0
    buttons = " ".join(
        b.get("text", "")
        for row in (entry["reply_markup"] or {}).get("inline_keyboard", [])
        for b in row
    )
    leaked = cards_in(text + " " + buttons) - seen
    assert not leaked, f"user {viewer} was shown hidden cards {leaked}: {text!r}"
    return 1
