"""The fake Bot API never repeats an update id or a callback query id across
fakes (Telegram does not either): a bot whose update dedupe remembers them in a
Redis that outlives one fake -- the sandbox with ``REDIS_URL`` -- would take the
next run's updates for the last run's and drop them."""

from __future__ import annotations

from sandbox.fake_api.world import World


async def test_two_fakes_hand_out_different_ids() -> None:
    one, two = World(), World()
    first = [w.enqueue("message", {}) for w in (one, two)]
    ids = [u["update_id"] for u in first if u is not None]
    assert len(set(ids)) == 2, ids
    assert one.new_query_id() != two.new_query_id()
    later = one.enqueue("message", {})
    assert later is not None
    assert later["update_id"] == ids[0] + 1  # sequential within one fake, as Telegram's
