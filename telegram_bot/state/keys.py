"""Key names of the flood limiter (:mod:`telegram_bot.delivery.flood.limiter`) and the checks of
what goes into its digests."""

from __future__ import annotations

from tables import KeyValueStore


class FloodKeys:
    """The flood limiter's keys.  A chat's keys share the chat's hash tag
    ``{c:<chat>}`` (one slot: a single script takes its buckets and checks a
    message's digest on Redis Cluster, and the chats spread over the nodes);
    the fleet-wide bucket is alone in ``{all}`` and leased in batches.

    ``P rl:{all}`` (hash ``t`` tokens, ``s`` stamp: the bot's overall bucket),
    ``P rl:{c:<chat>}:chat`` (one chat's bucket), ``P rl:{c:<chat>}:group`` (a
    group's per-minute bucket), ``P rl:{c:<chat>}:msg:<message>`` (string: the
    content and table version last shown), ``P rl:{c:<chat>}:at:<message>``
    (string: when the message was last edited, by any process),
    ``P rl:{c:<chat>}:fly:<message>`` (string ``<owner>@<until>``: the one edit
    of the message in flight, its lease).  Buckets expire when they would be
    full again; digests ``digest_ttl`` after their last edit, last-edit times
    ``edit_ttl`` after it, leases ``edit_lease`` after they were taken."""

    def __init__(self, kv: KeyValueStore) -> None:
        self.kv = kv

    def rate_all(self) -> str:
        return self.kv.key("rl:{all}")

    def rate_chat(self, chat_id: int) -> str:
        return self.kv.key(f"rl:{{c:{chat_id}}}:chat")

    def rate_group(self, chat_id: int) -> str:
        return self.kv.key(f"rl:{{c:{chat_id}}}:group")

    def sent_digest(self, chat_id: int, message_id: int) -> str:
        return self.kv.key(f"rl:{{c:{chat_id}}}:msg:{message_id}")

    def edited_at(self, chat_id: int, message_id: int) -> str:
        return self.kv.key(f"rl:{{c:{chat_id}}}:at:{message_id}")

    def in_flight(self, chat_id: int, message_id: int) -> str:
        return self.kv.key(f"rl:{{c:{chat_id}}}:fly:{message_id}")
