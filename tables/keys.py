"""The Redis key schema of the table service's own keys.  (The bot names its own
keys -- chat state, preferences, update claims, render marks, flood buckets -- in
``telegram_bot.state.keys``, through :meth:`tables.KeyValueStore.key` and
:meth:`~tables.KeyValueStore.table_key`, under the same prefix.)

Every key starts with the service's prefix ``P`` (default ``durak:``; tests use a
unique prefix each).  A *table* is one lobby and the games of its match (C5/S5
rematches); every key of one table -- hence of each of its games -- shares the
hash tag ``{t:<id>}``, so the compare-and-set script, which touches several of
them, runs on Redis Cluster too.

Per table (``<id>`` is the invite code, ``secrets.token_urlsafe(8)``):

``P{t:<id>}:table`` -- hash, the single source of truth, written only by the CAS
    script (:mod:`tables.store`):

    ========  =========================================================
    ``v``     version: +1 on every write (moves, lobby changes, admin)
    ``t``     table JSON: settings, seats, status, match (:mod:`.model`)
    ``s``     game state: :mod:`tables.codec` blob (zlib JSON)
    ``d``     the game's next turn deadline, epoch ms (absent: none)
    ``r``     the last request ids and the versions they produced
    ``e``     the open chunk of the event log (:mod:`tables.eventlog`)
    ``res``   JSON result of the last finished game of the match
    ========  =========================================================

``P{t:<id>}:live`` -- pub/sub channel (#42): the CAS script announces every
    write's version there, ``SPUBLISH`` (a shard channel in the table's slot)
    on a cluster, ``PUBLISH`` on one Redis (:mod:`tables.live`).

``P{t:<id>}:events`` -- stream, the event log: every applied action and
    system event with its resulting version, batched: entry id
    ``<version>-0``, field ``z`` = a deflated chunk of log text (see
    :mod:`tables.eventlog`; the newest chunk is still in ``e``); capped
    with ``MAXLEN``; same TTL as the table; created at the first flush.

Global (hint/index keys, each written with one command or one pipeline, never
in a script together with table keys).  A key named ``<key>:<what>{<key>}``
sits *beside* ``<key>``: its hash tag is the whole name of ``<key>`` (which has
none), so both are in one slot and one script or pipeline may touch both on
Redis Cluster (:func:`beside`):

``P timers``          zset table id -> next deadline (ms); a hint: the scheduler
                      re-checks the table's ``d`` (:mod:`tables.timers`).
                      Sharded: ``P timers:<k>`` for shard k = 1 .. K-1
                      (``crc32(id) mod K``, ``LiveConfig.timer_shards``); one
                      key each, so the shards spread over a cluster's nodes
``P timers:lease{P timers}``, ``P timers:<k>:lease{P timers:<k>}``
                      string ``<owner>|<until ms>``: the process that handles
                      the shard's timers for now, beside the shard, so one
                      script renews it and claims the shard's due hints
``P timers:served{P timers}``, ``P timers:<k>:served{P timers:<k>}``
                      string: the cluster node id (``CLUSTER MYID``) of the
                      master that served the shard's last tick, written when it
                      changes: another master (a failover) owes a repair (#40)
``P timers:repair{P timers}``, ``P timers:<k>:repair{P timers:<k>}``
                      string, a token: the shard's hints may be incomplete (a
                      failover, an outage of its master, a hint owed meanwhile)
                      -- its holder re-hints every table of the index from its
                      ``d`` field, twice, then deletes the token if unchanged
                      (#40, :mod:`tables.hint_repair`)
``P timers:procs``    zset process id -> last round (ms): the live schedulers,
                      whose count sets each one's share of the shards
``P timers:wake``     pub/sub channel: a timer hint written by a process that
                      does not hold its shard (``h <shard> <ms>``), a shard
                      handed back or a scheduler joined (``free``), so the
                      holders' loops, which sleep until their earliest hint,
                      look at once (#39, :mod:`tables.timers`)
``P tables``          zset table id -> last status change (ms); admin listing
``P tables:exp{P tables}``
                      zset table id -> when its table key expires (epoch ms,
                      the service clock), written with the ``P tables`` entry
                      at each status change; never later than the expiry (the
                      writes between renew the TTL): the pruner reads only the
                      entries due, drops those whose table is gone and moves
                      the others to their real expiry
``P tables:prune``    string ``<owner>|<until ms>``: the process that prunes
                      ``tables`` each minute (the others do not)
``P finished``        zset ``<id>:<game no>:<variant>`` -> finish time (ms),
                      trimmed to the last 7 days
``P finished:multi``  the same, of the games of two humans or more only: the
                      ones the ratings settle (#38: the sweep's list; a solo
                      game against the AI has no rating data)
``P u:{<user>}``      string: the table id where the user sits (validated on
                      read: a finished or vanished table does not count)
``P u:{<user>}:claim`` string, a few seconds: the pointer is a fresh claim, the
                      seat not written yet (a join, create or rematch in flight)
``P stats:<user>``    hash ``<variant>:games|losses|draws|p<place>`` -> count
``P top:<chat>``      hash ``<user>:<variant>:games|losses|draws`` and
                      ``<user>:name``: the chat's leaderboard
``P{audit}``         stream of operator actions (admin API): who (token name and
                      role), what, target, result, when; ``MAXLEN ~``-capped
``P{audit}:refused``  stream of the attempts refused before anything was tried
                      (401, 403), capped on its own so that they never push the
                      real writes out of ``P{audit}`` (same hash tag: one script
                      gives both one id sequence, :mod:`tables.audit`)
``P rec:<id>:<game>`` string, the record of a finished game (JSON, for replays
                      and ``python -m engine replay``), for ``replay_ttl``
``P rec:u:<user>``    zset ``<id>:<game>`` -> finish time (ms): the user's last
                      finished games (their records may have expired since)
``P notify``          pub/sub channel: JSON ``{"table", "version", "kind", ...}``
                      published by the CAS script for timer, AI-takeover and
                      admin writes, so every bot process can re-render
"""

from __future__ import annotations

import zlib


def beside(key: str, what: str) -> str:
    """The key ``<key>:<what>{<key>}``: its hash tag is the whole name of ``key``,
    so it hashes to ``key``'s slot (a tag inside ``key``, from a prefix with
    braces, comes first in both)."""
    return f"{key}:{what}{{{key}}}"


class Keys:
    """Key names under one prefix."""

    __slots__ = (
        "audit", "audit_refused", "finished", "finished_multi", "notify", "prefix", "prune_lease", "tables",
        "tables_exp", "timer_procs", "timer_shards", "timer_wake", "timers",
    )  # fmt: skip

    def __init__(self, prefix: str = "durak:", timer_shards: int = 1) -> None:
        self.prefix = prefix
        self.timers = f"{prefix}timers"  # shard 0 (the one key of old)
        self.timer_shards = max(1, timer_shards)
        self.timer_procs = f"{prefix}timers:procs"
        self.timer_wake = f"{prefix}timers:wake"
        self.prune_lease = f"{prefix}tables:prune"
        self.tables = f"{prefix}tables"
        self.tables_exp = beside(self.tables, "exp")
        self.finished = f"{prefix}finished"
        self.finished_multi = f"{prefix}finished:multi"
        self.notify = f"{prefix}notify"
        self.audit = f"{prefix}{{audit}}"
        self.audit_refused = f"{self.audit}:refused"

    def timer_shard(self, shard: int) -> str:
        """The timer hints of shard ``shard`` (0 .. ``timer_shards`` - 1)."""
        return self.timers if shard == 0 else f"{self.timers}:{shard}"

    def timer_lease(self, shard: int) -> str:
        """Who handles timer shard ``shard`` and until when (:mod:`.timers`),
        in the shard's slot."""
        return beside(self.timer_shard(shard), "lease")

    def timer_served(self, shard: int) -> str:
        """The cluster node that served timer shard ``shard``'s last tick (#40),
        in the shard's slot."""
        return beside(self.timer_shard(shard), "served")

    def timer_repair(self, shard: int) -> str:
        """A repair of timer shard ``shard``'s hints is owed (#40,
        :mod:`.hint_repair`), in the shard's slot."""
        return beside(self.timer_shard(shard), "repair")

    def shard_of(self, table_id: str) -> int:
        """The timer shard of a table: ``crc32(id) mod timer_shards``."""
        return zlib.crc32(table_id.encode()) % self.timer_shards

    def timers_of(self, table_id: str) -> str:
        """The timer shard key of a table."""
        return self.timer_shard(self.shard_of(table_id))

    def table(self, table_id: str) -> str:
        return f"{self.prefix}{{t:{table_id}}}:table"

    def events(self, table_id: str) -> str:
        return f"{self.prefix}{{t:{table_id}}}:events"

    def live(self, table_id: str) -> str:
        """The table's live channel (#42): every write of the table announces
        its version there (a shard channel in the table's slot on a cluster)."""
        return f"{self.prefix}{{t:{table_id}}}:live"

    def render_claim(self, table_id: str, message: str) -> str:
        """The newest version of the table a process sent to ``message``
        (``<chat>:<id>``) while the bot's shared state for that chat was down,
        and what it showed (``<version>:<text>:<markup>`` digests, #40,
        :meth:`tables.tables.Tables.claim_render`), in the table's slot."""
        return f"{self.prefix}{{t:{table_id}}}:fallback:{message}"

    def render_window(self, table_id: str, window: str) -> str:
        """The renders of the table claimed fleet-wide (:meth:`render_claim`)
        that count in the chat's flood window ``window`` (its key), a sorted
        set in the table's slot (#40)."""
        return f"{self.prefix}{{t:{table_id}}}:fallback:w:{window}"

    def table_keys(self, table_id: str) -> list[str]:
        """Every key of one table (for ``MEMORY USAGE`` and deletion)."""
        return [self.table(table_id), self.events(table_id)]

    def user(self, user_id: int) -> str:
        return f"{self.prefix}u:{{{user_id}}}"

    def user_claim(self, user_id: int) -> str:
        """Set with the pointer by a join or create, for a short while: the seat
        is not written yet (same hash tag as the pointer)."""
        return f"{self.prefix}u:{{{user_id}}}:claim"

    def stats(self, user_id: int) -> str:
        return f"{self.prefix}stats:{user_id}"

    def top(self, chat_id: int) -> str:
        return f"{self.prefix}top:{chat_id}"

    def record(self, table_id: str, game: int) -> str:
        """The record of game ``game`` of a table (:mod:`tables.replays`)."""
        return f"{self.prefix}rec:{table_id}:{game}"

    def recent_records(self, user_id: int) -> str:
        """The user's recent finished games, for ``/replay``."""
        return f"{self.prefix}rec:u:{user_id}"


class RatingKeys:
    """The ratings' keys (#25, #38; :mod:`tables.ratings`, :mod:`tables.rating_log`,
    :mod:`tables.migrate`).  ``P`` the prefix; ``U`` = ``P{ru:<user>}``: each
    player's data in his own slot, so a cluster spreads the players.

    ``U:r``                 hash: ``<variant>`` -> JSON ``[mu, sigma, games]``,
                            ``rev`` (+1 on each move of his rating), ``name``,
                            ``played`` (games with other people), ``first`` (ms of
                            the first), ``lock`` (a settlement holding him)
    ``U:rel``               list of ``1``/``0``, newest first: his last games, the
                            AI never took his seat in them (``1``) or did
    ``U:off``               zset ``<table>:<game>`` -> ms: his walkaways from rated
                            games (older than 72 h trimmed at his next one; the
                            reads count only the 72 h, #38)
    ``U:pend``              hash ``<table>:<game>`` -> the cooldown (ms) it set: his
                            leaves charged at once and not settled yet (#38)
    ``U:cool``              string JSON ``{"until", "n"}``, expiring then: the latest
                            end any offence in ``off`` sets (``RECOOL_LUA``)
    ``U:h``                 list of JSON history entries, newest first
    ``U:done``, ``U:donez`` hash ``<table>:<game>`` -> ``<cooldown ms>|<rev>`` and
                            zset of the same by time: his settled games (8 days)
    ``U:pair:<b>``          zset ``<table>:<game>`` -> ms: his and ``b``'s counted
                            rated games in the last 24 h (in the lower one's slot)
    ``U:opp``               zset user -> ms: the people he finished games with
                            (casual or rated; not a game the AI played his seat
                            at the end of) in the last ``diversity_days``, at most
                            ``diversity_keep`` of them (the latest), expiring then
                            (#38: the opponent-diversity guard)
    ``P{rt}:top:<variant>`` zset user -> shown rating (established players)
    ``P{rt}:new:<variant>`` zset user -> shown rating (provisional players)
    ``P{rt}:brev:<variant>`` hash user -> the rev the boards show
    ``P{rt}:migrated``      string: ``migrate-ratings`` ran on this Redis
    ``P{rl:<k>}:g:<table>:<game>`` hash: ``st`` (planning, committed, aborted,
                            settled), the attempt and its lease, the plan; then
                            ``s`` the settlement (JSON), ``o:<user>`` the cooldown
                            (ms) of each offence (8 days)
    ``P{rl:<k>}:log``       stream: the counted rated games of the tables of shard
                            ``k`` (``crc32(table) mod LOG_SHARDS``), in settling order
    ``P{rt}:r:<user>`` ...  before #38: moved by ``python -m tables migrate-ratings``
                            (:meth:`legacy_user`); ``P{rt}:g:...`` and
                            ``P{rt}:log`` are read where they are
    """

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.base = f"{prefix}{{rt}}"
        """The one slot of the leaderboards (and of the data before #38)."""

    def user_base(self, user: int) -> str:
        """``P{ru:<user>}``: the slot of one player's rating data."""
        return f"{self.prefix}{{ru:{user}}}"

    def rating(self, user: int) -> str:
        return f"{self.user_base(user)}:r"

    def reliability(self, user: int) -> str:
        return f"{self.user_base(user)}:rel"

    def offences(self, user: int) -> str:
        return f"{self.user_base(user)}:off"

    def cooldown(self, user: int) -> str:
        return f"{self.user_base(user)}:cool"

    def history(self, user: int) -> str:
        return f"{self.user_base(user)}:h"

    def settled(self, user: int) -> str:
        return f"{self.user_base(user)}:done"

    def settled_at(self, user: int) -> str:
        return f"{self.user_base(user)}:donez"

    def pending(self, user: int) -> str:
        return f"{self.user_base(user)}:pend"

    def opponents(self, user: int) -> str:
        return f"{self.user_base(user)}:opp"

    def user_keys(self, user: int) -> list[str]:
        """``r``, ``rel``, ``off``, ``cool``, ``h``, ``done``, ``donez``, ``pend``:
        in this order (the scripts take them so)."""
        return [
            self.rating(user), self.reliability(user), self.offences(user), self.cooldown(user),
            self.history(user), self.settled(user), self.settled_at(user), self.pending(user),
        ]  # fmt: skip

    def pair(self, lo: int, hi: int) -> str:
        """``P{ru:<lo>}:pair:<hi>``: the two's counted rated games (``lo < hi``)."""
        return f"{self.user_base(lo)}:pair:{hi}"

    def shard_base(self, shard: int) -> str:
        return f"{self.prefix}{{rl:{shard}}}"

    def game(self, shard: int, table: str, game: int) -> str:
        """A game's settlement, beside the log stream it is appended to."""
        return f"{self.shard_base(shard)}:g:{table}:{game}"

    def log(self, shard: int) -> str:
        return f"{self.shard_base(shard)}:log"

    def board(self, variant: str, provisional: bool = False) -> str:
        return f"{self.base}:{'new' if provisional else 'top'}:{variant}"

    def board_rev(self, variant: str) -> str:
        return f"{self.base}:brev:{variant}"

    @property
    def migrated(self) -> str:
        """The mark that ``migrate-ratings`` ran (:meth:`TableService.upgrade`)."""
        return f"{self.base}:migrated"

    # ------------------------------------------------ before #38 (read, moved)
    def legacy_game(self, table: str, game: int) -> str:
        """Where a game was settled before #38 (read, never written)."""
        return f"{self.base}:g:{table}:{game}"

    @property
    def legacy_log(self) -> str:
        """The one log before #38: kept, replayed first, never written."""
        return f"{self.base}:log"

    def legacy_user(self, user: int) -> dict[str, str]:
        """A player's keys before #38, by what they hold: ``P{rt}:r:<user>``,
        ``:rel:``, ``:off:``, ``:cool:``, ``:h:``, ``:pend:``."""
        b = self.base
        return {
            "r": f"{b}:r:{user}", "rel": f"{b}:rel:{user}", "off": f"{b}:off:{user}",
            "cool": f"{b}:cool:{user}", "h": f"{b}:h:{user}", "pend": f"{b}:pend:{user}",
        }  # fmt: skip

    def legacy_pair(self, a: int, b: int) -> str:
        return f"{self.base}:pair:{a}:{b}"

    @property
    def legacy_pattern(self) -> str:
        """Every key of before #38 (``SCAN MATCH``)."""
        return f"{self.base}:*"


class ArenaKeys:
    """The arenas' keys (#27; :mod:`tables.arenas`).  All of one arena share the
    hash tag ``{ar:<id>}``:

    ``P{ar:<id>}``        hash: ``v`` version (+1 a write), ``a`` the arena JSON
    ``P{ar:<id>}:games``  list: the games scored, oldest first (JSON: table, game,
                          finish time, players, points, doubled), appended by the
                          same script that scores them
    ``P{ar:<id>}:repair`` string: until when (ms, the service clock) the check of
                          its seated tables is done (#38: at most once a
                          ``repair_after``, not at every wake)
    ``P{ar}:chat:<chat>`` string: the group's current arena (one at a time)
    ``P{ar}:all``         zset arena id -> creation time (ms): the operators' list
    """

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.base = f"{prefix}{{ar}}"

    def arena(self, arena_id: str) -> str:
        return f"{self.prefix}{{ar:{arena_id}}}"

    def games(self, arena_id: str) -> str:
        return f"{self.arena(arena_id)}:games"

    def repair(self, arena_id: str) -> str:
        return f"{self.arena(arena_id)}:repair"

    def chat(self, chat: int) -> str:
        return f"{self.base}:chat:{chat}"

    @property
    def all(self) -> str:
        return f"{self.base}:all"
