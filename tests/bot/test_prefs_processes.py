"""Preferences with several bot processes (issue #12): /lang answered by one
process is seen by the next update any other process handles."""

from __future__ import annotations

from tables import LiveConfig, TableService
from telegram_bot.state.chat_state import ChatStateStore
from telegram_bot.state.prefs import PrefsCache


async def test_a_language_set_in_one_process_is_seen_by_another(
    redis_url: str, redis_prefix: str
) -> None:
    services = [TableService.from_url(redis_url, LiveConfig(prefix=redis_prefix)) for _ in "ab"]
    try:
        a, b = (PrefsCache(ChatStateStore(svc.kv)) for svc in services)
        assert (await a.get(7)).lang is None  # process a has read user 7
        assert (await a.get_many(7, -100))[-100].lang is None
        await b.update(7, lang="ru")  # /lang in process b
        await b.update(-100, lang="uk")
        assert (await a.get(7)).lang == "ru"
        got = await a.get_many(7, -100)
        assert (got[7].lang, got[-100].lang) == ("ru", "uk")
        # one round trip for the user and the group together
        before = services[0].store.round_trips
        await a.get_many(7, -100)
        assert services[0].store.round_trips == before + 1
    finally:
        for svc in services:
            await svc.aclose()
