"""The update dedupe middleware (:mod:`telegram_bot.state.dedupe`) against a real Redis:
an update delivered many times at once, to one process or to several, runs its
handler once; a callback query is one press whichever update carries it; a
failed handler releases its claim; without Redis every update goes through."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from aiogram.types import Update

from tables import LiveConfig, TableService
from telegram_bot.state.dedupe import UpdateDedupe

BOT_ID = 4242


def message_update(update_id: int) -> Update:
    return Update.model_validate(
        {
            "update_id": update_id,
            "message": {
                "message_id": 7,
                "date": 0,
                "chat": {"id": 1, "type": "private"},
                "from": {"id": 1, "is_bot": False, "first_name": "Ann"},
                "text": "/new",
            },
        }
    )


def callback_update(update_id: int, query_id: str) -> Update:
    return Update.model_validate(
        {
            "update_id": update_id,
            "callback_query": {
                "id": query_id,
                "from": {"id": 1, "is_bot": False, "first_name": "Ann"},
                "chat_instance": "ci",
                "data": "l:abc:a",
            },
        }
    )


class Counter:
    """A handler that counts its calls (and yields, as a real one would)."""

    def __init__(self, fail: bool = False, cancelled: bool = False) -> None:
        self.calls = 0
        self.fail = fail
        self.cancelled = cancelled

    async def __call__(self, event: Any, data: dict[str, Any]) -> str:
        self.calls += 1
        await asyncio.sleep(0)
        if self.fail:
            raise RuntimeError("the handler failed")
        if self.cancelled:
            raise asyncio.CancelledError
        return "handled"


class FakeBot:
    id = BOT_ID


@pytest.fixture
async def services(redis_url: str, redis_prefix: str) -> AsyncIterator[Callable[[], TableService]]:
    made: list[TableService] = []

    def make() -> TableService:
        svc = TableService.from_url(redis_url, LiveConfig(prefix=redis_prefix))
        made.append(svc)
        return svc

    yield make
    for svc in made:
        await svc.aclose()


async def test_an_update_delivered_twenty_times_at_once_is_handled_once(
    services: Callable[[], TableService],
) -> None:
    dedupe = UpdateDedupe(services().kv)
    handler = Counter()
    data = {"bot": FakeBot()}
    for update in (message_update(1), callback_update(2, "q2")):
        before = handler.calls
        results = await asyncio.gather(*(dedupe(handler, update, dict(data)) for _ in range(20)))
        assert handler.calls == before + 1
        assert results.count("handled") == 1
    assert dedupe.duplicates == 38


async def test_two_processes_handle_one_update_once(services: Callable[[], TableService]) -> None:
    one, two = UpdateDedupe(services().kv), UpdateDedupe(services().kv)
    handler = Counter()
    for n in range(20):
        update = callback_update(100 + n, f"q{n}")
        await asyncio.gather(
            one(handler, update, {"bot": FakeBot()}), two(handler, update, {"bot": FakeBot()})
        )
        assert handler.calls == n + 1


async def test_one_press_in_two_updates_is_one_press(services: Callable[[], TableService]) -> None:
    dedupe = UpdateDedupe(services().kv)
    handler = Counter()
    await dedupe(handler, callback_update(10, "same"), {"bot": FakeBot()})
    await dedupe(handler, callback_update(11, "same"), {"bot": FakeBot()})
    assert handler.calls == 1
    await dedupe(handler, callback_update(12, "other"), {"bot": FakeBot()})
    assert handler.calls == 2


async def test_claims_are_hash_tagged_and_expire(services: Callable[[], TableService]) -> None:
    svc = services()
    dedupe = UpdateDedupe(svc.kv, ttl=30)
    update = callback_update(55, "q55")
    keys = dedupe.keys(update, BOT_ID) + dedupe.keys(message_update(56), BOT_ID)
    assert keys == [svc.kv.key("cbq:{q55}"), svc.kv.key(f"upd:{{{BOT_ID}:56}}")]
    await dedupe(Counter(), update, {"bot": FakeBot()})
    await dedupe(Counter(), message_update(56), {"bot": FakeBot()})
    for key in keys:
        assert 0 < await svc.kv.pttl(key) <= 30_000


async def test_a_failed_handler_releases_its_claim(services: Callable[[], TableService]) -> None:
    dedupe = UpdateDedupe(services().kv)
    update = callback_update(77, "q77")
    with pytest.raises(RuntimeError):
        await dedupe(Counter(fail=True), update, {"bot": FakeBot()})
    handler = Counter()
    assert await dedupe(handler, update, {"bot": FakeBot()}) == "handled"  # a redelivery
    assert handler.calls == 1


async def test_a_cancelled_handler_releases_its_claim(
    services: Callable[[], TableService],
) -> None:
    """#28: a handler cut short by a stop (its task cancelled) is handled afresh
    when Telegram redelivers the update to another process."""
    dedupe = UpdateDedupe(services().kv)
    update = callback_update(78, "q78")
    with pytest.raises(asyncio.CancelledError):
        await dedupe(Counter(cancelled=True), update, {"bot": FakeBot()})
    handler = Counter()
    assert await dedupe(handler, update, {"bot": FakeBot()}) == "handled"  # a redelivery
    assert handler.calls == 1


async def test_without_redis_every_update_goes_through(redis_prefix: str) -> None:
    async with TableService.from_url(
        "redis://127.0.0.1:1/0", LiveConfig(prefix=redis_prefix)
    ) as svc:
        dedupe = UpdateDedupe(svc.kv)
        handler = Counter()
        update = message_update(9)
        await dedupe(handler, update, {"bot": FakeBot()})
        await dedupe(handler, update, {"bot": FakeBot()})
        assert handler.calls == 2  # not blocked: the writes' request ids still dedupe


async def test_two_processes_on_a_cluster_handle_each_update_once(
    redis_cluster_url: str, redis_prefix: str
) -> None:
    """#28: on a Redis Cluster, two processes claiming the same presses at once:
    each is handled by exactly one of them (a claim split over two nodes had
    both drop it, and nobody answered)."""
    config = LiveConfig(prefix=redis_prefix)
    async with (
        TableService.from_url(redis_cluster_url, config) as a,
        TableService.from_url(redis_cluster_url, config) as b,
    ):
        one, two = UpdateDedupe(a.kv), UpdateDedupe(b.kv)
        handler = Counter()
        updates = [callback_update(1000 + n, f"press{n}") for n in range(400)]
        results = await asyncio.gather(
            *(m(handler, u, {"bot": FakeBot()}) for u in updates for m in (one, two))
        )
        handled = [results[2 * n : 2 * n + 2].count("handled") for n in range(len(updates))]
        assert handled == [1] * len(updates)
        assert one.duplicates + two.duplicates == len(updates)
