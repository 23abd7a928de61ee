"""Every Redis key the bot itself uses is spelled in ``telegram_bot/state/keys.py``.
The spellings are pinned here byte for byte: a running fleet's chat state,
buckets, claims and marks are found by them, so a changed one would orphan
what a deploy finds in Redis."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tables import KeyValueStore, LiveConfig, TableService
from telegram_bot.state.keys import ChatStateKeys, DedupeKeys, FloodKeys, HintKeys, RenderKeys


@pytest.fixture
async def kv(redis_url: str) -> AsyncIterator[KeyValueStore]:
    svc = TableService.from_url(redis_url, LiveConfig(prefix="P:"))  # nothing is written
    yield svc.kv
    await svc.aclose()


def test_the_flood_limiter_keys(kv: KeyValueStore) -> None:
    keys = FloodKeys(kv)
    assert keys.rate_all() == "P:rl:{all}:w"
    assert keys.rate_chat(-100123) == "P:rl:{c:-100123}:w"
    assert keys.rate_group(-100123) == "P:rl:{c:-100123}:min"
    assert keys.sent_digest(42, 7) == "P:rl:{c:42}:msg:7"


def test_the_chat_state_keys(kv: KeyValueStore) -> None:
    keys = ChatStateKeys(kv)
    assert keys.table("AbCd12") == "P:{t:AbCd12}:ui"
    assert keys.prefs(42) == "P:ui:42"
    assert keys.prefs(-100123) == "P:ui:-100123"


def test_the_update_claim_keys(kv: KeyValueStore) -> None:
    keys = DedupeKeys(kv)
    assert keys.update(555, 10) == "P:upd:{555:10}"
    assert keys.callback_query("4321-q") == "P:cbq:{4321-q}"


def test_the_pending_render_keys(kv: KeyValueStore) -> None:
    keys = RenderKeys(kv)
    assert keys.due(3) == "P:render:{r3}:due"
    assert keys.versions(3) == "P:render:{r3}:v"
    assert keys.sweepers() == "P:render:sweepers"


def test_the_hint_claim_keys(kv: KeyValueStore) -> None:
    keys = HintKeys(kv)
    assert keys.flood("AbCd12", 3, 42) == "P:{t:AbCd12}:hint:flood:3:42"
