"""Every Redis key the bot itself uses, spelled in this one module: one class
per owner, naming its keys, their type and how long they live.  (The table
service's own keys are in :mod:`tables.keys`.)

Every key starts with the service's prefix ``P`` (``kv.key``).  The part of a
key in ``{...}`` is its hash tag: the keys one script names share it (one slot
of a Redis Cluster), and different chats, tables, shards and updates get
different tags, so they spread over the cluster's nodes.  Redis is reached only
through the table service's key-value API (``svc.kv``); the bot never imports
redis."""

from __future__ import annotations

from tables import KeyValueStore


class FloodKeys:
    """The flood limiter's keys (:mod:`telegram_bot.delivery.flood.limiter`; the
    hold after a 429 writes the same windows).  A chat's keys share the chat's
    hash tag ``{c:<chat>}`` (one slot: a single script counts in its windows and
    checks a message's digest on Redis Cluster, and the chats spread over the
    nodes); the fleet-wide window is alone in ``{all}`` and leased in batches.

    ``P rl:{all}:w`` (sorted set of entries scored by time: the bot's overall
    sliding window, #28), ``P rl:{c:<chat>}:w`` (one chat's window),
    ``P rl:{c:<chat>}:min`` (a group's minute), ``P rl:{c:<chat>}:eph`` (its
    ephemeral writes' minute while they are not counted with the public ones,
    #24), ``P rl:{c:<chat>}:w:<message>`` (one ephemeral message's window), ``P rl:{c:<chat>}:msg:<message>`` (string: the
    content and table version last shown and, while one edit of the message
    is in flight, its lease: ``|<owner>@<until>``; then ``~<time>``: when the
    message was last edited, by any process, #39).  A chat's
    first window of a call (``w``, or ``eph``) also holds, scored below 0, the
    calls Telegram has not answered yet (``o:<entry name>|<cost>``, minus their
    take; they count for ``edit_lease``) and ``~`` (minus until when the key
    lives: a minute past its last call's needs, set again once a minute, #39).
    Windows expire when their last entry stops counting; digests ``digest_ttl``
    after their last edit; a lease lapses ``edit_lease`` after it was taken."""

    def __init__(self, kv: KeyValueStore) -> None:
        self.kv = kv

    def rate_all(self) -> str:
        return self.kv.key("rl:{all}:w")

    def rate_chat(self, chat_id: int) -> str:
        return self.kv.key(f"rl:{{c:{chat_id}}}:w")

    def rate_group(self, chat_id: int) -> str:
        return self.kv.key(f"rl:{{c:{chat_id}}}:min")

    def rate_ephemeral(self, chat_id: int) -> str:
        """A group's minute of ephemeral writes, while they are not counted with
        its public ones (#24)."""
        return self.kv.key(f"rl:{{c:{chat_id}}}:eph")

    def rate_receiver(self, chat_id: int, receiver: int) -> str:
        """The ephemeral writes to one member of a group: his own window, a
        private chat's pace (#24), while they are not counted with the group's."""
        return self.kv.key(f"rl:{{c:{chat_id}}}:u:{receiver}")

    def rate_message(self, chat_id: int, message_id: int) -> str:
        """One ephemeral message's own window (its member's pace, #24)."""
        return self.kv.key(f"rl:{{c:{chat_id}}}:w:{message_id}")

    def sent_digest(self, chat_id: int, message_id: int) -> str:
        return self.kv.key(f"rl:{{c:{chat_id}}}:msg:{message_id}")


class ChatStateKeys:
    """The chat state's keys (:mod:`telegram_bot.state.chat_state`, which lists
    their fields).

    ``P{t:<id>}:ui`` (hash, per table: its message ids, selections and
    languages) is in the table's slot (its hash tag ``{t:<id>}``) and expires
    like the table, ``ttl`` (the service's ``game_ttl``) after its last write;
    ``P ui:<who>`` (hash, per user or chat: his preferences) expires
    ``prefs_ttl`` (400 days) after its last write."""

    def __init__(self, kv: KeyValueStore) -> None:
        self.kv = kv

    def table(self, table_id: str) -> str:
        """``P{t:<id>}:ui``."""
        return self.kv.table_key(table_id, "ui")

    def prefs(self, who: int) -> str:
        """``P ui:<who>``."""
        return self.kv.key(f"ui:{who}")


class HintKeys:
    """The once-per-game claims of the hints a player is given
    (:mod:`telegram_bot.state.hints`): strings (``1``), set ``NX`` to live as long
    as the table's chat state (the service's ``game_ttl``).

    ``P{t:<id>}:hint:flood:<game>:<user>`` -- his hand in the group was held
    back by the group's flood limit in game ``<game>`` of table ``<id>`` and he
    was told so (#24).  In the table's slot (hash tag ``{t:<id>}``), next to its
    chat state.

    ``P{g:<chat>}:hint:lost:<whom>`` -- the bot lost the group ``<chat>``
    (removed, or upgraded to a supergroup: #38) and ``<whom>`` was told so:
    a player in private, or (``<whom>`` = the chat) the supergroup."""

    def __init__(self, kv: KeyValueStore) -> None:
        self.kv = kv

    def flood(self, table_id: str, game_no: int, user: int) -> str:
        """``P{t:<id>}:hint:flood:<game>:<user>``."""
        return self.kv.table_key(table_id, f"hint:flood:{game_no}:{user}")

    def lost(self, chat: int, whom: int) -> str:
        """``P{g:<chat>}:hint:lost:<whom>``."""
        return self.kv.key(f"{{g:{chat}}}:hint:lost:{whom}")


class DedupeKeys:
    """The claims of updates (:mod:`telegram_bot.state.dedupe`): strings (``1``),
    set ``NX`` to live ``UPDATE_DEDUPE_TTL`` seconds (600 by default, far beyond
    Telegram's webhook retries).

    ONE key an update: ``P cbq:{<callback query id>}`` for a callback query (one
    press is one query, whichever update carries it), ``P upd:{<bot id>:<update
    id>}`` for any other -- two keys would sit in two cluster slots, and a claim
    split between two processes was dropped by both.  Each key is its own hash
    tag: the claims spread over the slots, none is hot."""

    def __init__(self, kv: KeyValueStore) -> None:
        self.kv = kv

    def update(self, bot_id: int, update_id: int) -> str:
        """``P upd:{<bot id>:<update id>}``."""
        return self.kv.key(f"upd:{{{bot_id}:{update_id}}}")

    def callback_query(self, query_id: str) -> str:
        """``P cbq:{<callback query id>}``."""
        return self.kv.key(f"cbq:{{{query_id}}}")


class RenderKeys:
    """The pending-render marks (:mod:`telegram_bot.state.pending_renders`),
    split into ``shards`` by ``crc32(table) mod shards``; the two keys of shard
    ``k`` share its hash tag ``{r<k>}`` (every script of a shard names both).

    ``P render:{r<k>}:due`` (sorted set: table -> its deadline in ms) and
    ``P render:{r<k>}:v`` (hash: table -> ``<version>:<tries>``); both expire
    ``ttl`` (an hour by default) after the last mark set in the shard.
    ``P render:sweepers`` (sorted set: a sweeping process -> its last sweep,
    ms): who shares the sweep (#39)."""

    def __init__(self, kv: KeyValueStore) -> None:
        self.kv = kv

    def due(self, shard: int) -> str:
        """``P render:{r<k>}:due``."""
        return self.kv.key(f"render:{{r{shard}}}:due")

    def versions(self, shard: int) -> str:
        """``P render:{r<k>}:v``."""
        return self.kv.key(f"render:{{r{shard}}}:v")

    def sweepers(self) -> str:
        """``P render:sweepers``."""
        return self.kv.key("render:sweepers")


class BudgetKeys:
    """The groups' flood budgets learned from Telegram's 429s
    (:mod:`telegram_bot.state.budgets`, #24; the table service's before #39).

    ``P budget:{c:<chat>}`` (hash: the group's record, in the chat's slot
    beside its flood windows; expires ``ttl`` after its last change) and
    ``P budgets`` (sorted set: chat -> its last change, ms; the operators'
    list, pruned of expired records when read)."""

    def __init__(self, kv: KeyValueStore) -> None:
        self.kv = kv

    def group(self, chat: int) -> str:
        """``P budget:{c:<chat>}``."""
        return self.kv.key(f"budget:{{c:{chat}}}")

    def index(self) -> str:
        """``P budgets``."""
        return self.kv.key("budgets")


class ArenaAnswerKeys:
    """A group's answers while its arena is on (:mod:`telegram_bot.usecases.arena`):
    ``P arena_answer:{c:<chat>}:<command>`` (string ``1``, set ``NX`` for a
    minute): the group got its one answer to ``/arena`` or ``/top`` of the
    minute (#38)."""

    def __init__(self, kv: KeyValueStore) -> None:
        self.kv = kv

    def answer(self, chat_id: int, command: str) -> str:
        """``P arena_answer:{c:<chat>}:<command>``."""
        return self.kv.key(f"arena_answer:{{c:{chat_id}}}:{command}")


class PollKeys:
    """The long-polling lease (:mod:`telegram_bot.state.poll_lease`):
    ``P poll:lease`` (string ``<owner>``, expiring ``ttl``): the one process
    that polls Telegram for updates now."""

    def __init__(self, kv: KeyValueStore) -> None:
        self.kv = kv

    def lease(self) -> str:
        """``P poll:lease``."""
        return self.kv.key("poll:lease")


class PageKeys:
    """The Mini App's pages across the fleet (:mod:`telegram_bot.state.pages`, #42).

    ``P pages:{p<k>}`` (sorted set: ``<table>|<user>:<page>`` -> when that
    open page expires, ms; shard ``crc32(table) mod K``): the sweep's index of
    the pages kept in the tables' chat state (``pg:<user>:<page>`` of
    ``P{t:<id>}:ui``), so that the pages of a process that died expire and
    their hands are drawn again; a member leaves when its page closes or is
    swept.  ``P page_moves:{u:<user>}`` (sorted set: a move -> its time, ms):
    a player's page moves in the last ``MINIAPP_MOVES_WINDOW`` seconds, over
    every process; expires a window after his last move."""

    def __init__(self, kv: KeyValueStore) -> None:
        self.kv = kv

    def due(self, shard: int) -> str:
        """``P pages:{p<k>}``."""
        return self.kv.key(f"pages:{{p{shard}}}")

    def moves(self, user: int) -> str:
        """``P page_moves:{u:<user>}``."""
        return self.kv.key(f"page_moves:{{u:{user}}}")
