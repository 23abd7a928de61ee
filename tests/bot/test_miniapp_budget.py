"""The budget the Mini App saves (#42 point 6), and its flood limit over the
fleet (#42 point 9), end to end: the real bot on the fake Bot API, a real
Redis.

While a player's page is open -- on any process -- his hand message is not
edited on every move; when his last page closes it is brought up to date
once; a page whose process died expires and his hand is drawn again.  A
player flooding moves through the pages of two processes is limited at the
same total as through one."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from engine.cards import card_names
from sandbox.fake_api import FakeTelegram, RateLimits, SimUser
from sandbox.fake_api.models import Chat
from tables import LiveConfig, TableService
from telegram_bot.app import BotApp
from telegram_bot.buttons.callbacks import parse_game
from telegram_bot.state.pages import OpenPage, PageMoves, PagePresence
from tests.bot.e2e_group_kit import group_lobby
from tests.bot.e2e_kit import (
    SAFETY,
    Harness,
    cards_in,
    choose,
    game_buttons,
    press,
    running,
    settle,
    shows_result,
)
from tests.bot.miniapp_kit import MINIAPP, Page, init_data, pages, serving
from tests.tables.conftest import FakeClock


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


def hand_writes(fake: FakeTelegram, user: SimUser) -> int:
    """The bot's writes (sends, edits) to ``user``'s hand: his private chat, or
    ephemeral messages shown to him alone."""
    return sum(
        1
        for e in fake.world.outbox
        if e["chat_id"] == user.chat.id or e["receiver_user_id"] == user.id
    )


def chat_writes(fake: FakeTelegram, chat: Chat) -> int:
    return sum(
        1 for e in fake.world.outbox if e["chat_id"] == chat.id and not e["receiver_user_id"]
    )


def legal(view: dict[str, Any] | None) -> list[str]:
    return list(((view or {}).get("game") or {}).get("legal") or [])


async def mover_of(mine: dict[int, Page]) -> tuple[Page, dict[str, Any]] | None:
    """A page the game waits for, with the view it waits on (None: over)."""

    async def one() -> tuple[Page, dict[str, Any]] | None:
        while True:
            for p in mine.values():
                view = p.view
                if view is not None and view["status"] != "playing":
                    return None
                if view is not None and legal(view):
                    return p, view
            await asyncio.sleep(0.02)

    return await asyncio.wait_for(one(), SAFETY)


async def play_from_pages(mine: dict[int, Page], moves: int) -> int:
    """Up to ``moves`` moves from the pages (Take and Pass last); how many."""
    made = 0
    for _ in range(moves):
        found = await mover_of(mine)
        if found is None:
            break
        mover, view = found
        pick = [a for a in legal(view) if a[0] not in "KP"] or legal(view)
        result = await mover.move(pick[0], view)
        assert result["ok"], result
        made += 1
        for p in mine.values():
            await p.view_after(result["version"] - 1)
    return made


async def quiet(h: Harness) -> None:
    """Every edit the moves so far asked for has gone out."""
    assert h.bot is not None
    await settle(h)
    await h.bot.app.delivery.flush()


async def shows_now(h: Harness, user: SimUser, tid: str) -> None:
    """His hand message shows the table as it is now: its buttons carry the
    current version and it names every card of his hand."""
    hand = await h.hand_message(user, tid)
    assert hand is not None
    table, state, version = await h.svc.tables.get(tid)
    assert state is not None
    seat = table.seat_of(user.id)
    assert seat is not None
    versions = {cb.version for b in game_buttons(hand) if (cb := parse_game(b["callback_data"]))}
    assert versions <= {version}, (versions, version)
    shown = cards_in(" ".join([hand.text or "", *hand.button_texts]))
    cards = set(card_names(state.hand(seat)))
    assert cards <= shown, (cards, hand.text, hand.button_texts)


async def test_an_open_page_spares_his_hand_and_its_close_draws_it_once(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False, **MINIAPP) as h:
        humans = [fake.add_user(f"B{i}", language_code="en") for i in range(2)]
        ann, bob = humans
        tid, group = await group_lobby(h, "shchelkovsky", humans, 0)
        async with serving(h) as base, pages(base) as open_page:
            mine = {u.id: await open_page(init_data(fake.token, u.id), tid) for u in humans}
            for p in mine.values():
                await p.wait(lambda p=p: p.view)
            await quiet(h)
            before = {u.id: hand_writes(fake, u) for u in humans}
            table_before = chat_writes(fake, group)
            made = await play_from_pages(mine, 8)
            assert made >= 4
            await quiet(h)
            # 0 Bot API writes to a hand whose page is open, move after move
            assert {u.id: hand_writes(fake, u) - before[u.id] for u in humans} == {
                ann.id: 0,
                bob.id: 0,
            }
            assert chat_writes(fake, group) > table_before  # the table message goes on
            # his last page closes: his hand is brought up to date, once
            await mine[ann.id].close()
            await fake.world.wait_for(
                lambda: hand_writes(fake, ann) > before[ann.id], SAFETY, "his hand drawn"
            )
            await quiet(h)
            assert hand_writes(fake, ann) - before[ann.id] == 1
            assert hand_writes(fake, bob) == before[bob.id]  # his page is still open
            await shows_now(h, ann, tid)
            # from now on his hand follows the moves again: Bob's from his page,
            # or his own from a button of his hand
            drawn = hand_writes(fake, ann)
            if legal(mine[bob.id].view):
                await play_from_pages({bob.id: mine[bob.id]}, 1)
            else:
                hand = await h.hand_message(ann, tid)
                assert hand is not None
                button = choose(hand)
                assert button is not None, hand.button_texts
                await press(ann, hand, button)
            await fake.world.wait_for(
                lambda: hand_writes(fake, ann) > drawn, SAFETY, "his hand follows again"
            )
    assert not fake.stats.errors, fake.stats.error_texts


async def test_the_games_result_reaches_the_hands_of_open_pages(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """A game played to its end from the pages: the result goes to every
    hand at once (the hands waited move after move), and the pages closing
    afterwards add nothing -- the hands show the final state already."""
    extra: dict[str, Any] = {"miniapp_moves": 10_000, **MINIAPP}
    async with running(redis_url, redis_prefix, fake, flood_limiter=False, **extra) as h:
        humans = [fake.add_user(f"E{i}", language_code="en") for i in range(2)]
        tid, _group = await group_lobby(h, "chuvash", humans, 0)
        async with serving(h) as base, pages(base) as open_page:
            mine = {u.id: await open_page(init_data(fake.token, u.id), tid) for u in humans}
            for p in mine.values():
                await p.wait(lambda p=p: p.view)
            await quiet(h)
            before = {u.id: hand_writes(fake, u) for u in humans}
            made = await play_from_pages(mine, 2000)
            assert made > 10
            for p in mine.values():
                await p.wait(lambda p=p: p.view is not None and p.view["status"] != "playing")
            await quiet(h)
            for u in humans:
                assert shows_result(await h.hand_message(u, tid))
                assert 1 <= hand_writes(fake, u) - before[u.id] < made / 4  # the result only
            ended = {u.id: hand_writes(fake, u) for u in humans}
            for p in mine.values():
                await p.close()
            await quiet(h)
            assert {u.id: hand_writes(fake, u) for u in humans} == ended
    assert not fake.stats.errors, fake.stats.error_texts


async def test_his_hand_waits_for_his_last_page_on_any_process(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """Two pages of his on two bot processes: the first closing draws nothing
    (the other still shows the table), the second closing draws his hand."""
    async with running(redis_url, redis_prefix, fake, flood_limiter=False, **MINIAPP) as h:
        humans = [fake.add_user(f"M{i}", language_code="en") for i in range(2)]
        ann, bob = humans
        tid, _group = await group_lobby(h, "shchelkovsky", humans, 0)
        other = BotApp(h.settings(), clock=h.clock)
        await other.setup()
        other.start_background()  # its pages follow the table
        try:
            async with (
                serving(h) as near,
                serving(other) as far,
                pages(near) as open_near,
                pages(far) as open_far,
            ):
                mine = {u.id: await open_near(init_data(fake.token, u.id), tid) for u in humans}
                second = await open_far(init_data(fake.token, ann.id), tid)
                for p in [*mine.values(), second]:
                    await p.wait(lambda p=p: p.view)
                await quiet(h)
                before = hand_writes(fake, ann)
                assert await play_from_pages(mine, 3) >= 1
                await mine[ann.id].close()  # his page on this process
                assert await play_from_pages({ann.id: second, bob.id: mine[bob.id]}, 2) >= 1
                await quiet(h)
                assert hand_writes(fake, ann) == before  # his page there shows it
                await second.close()  # his last page, on the other process
                await fake.world.wait_for(
                    lambda: hand_writes(fake, ann) > before, SAFETY, "his hand drawn"
                )
                await quiet(h)
                assert hand_writes(fake, ann) == before + 1
                await shows_now(h, ann, tid)
        finally:
            await other.aclose()
    assert not fake.stats.errors, fake.stats.error_texts


async def test_a_page_whose_process_died_expires_and_his_hand_is_drawn(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """A process killed with his page open renews it no more: once it expired
    a sweep (any process's) draws his hand again."""
    extra: dict[str, Any] = {"render_grace": 2.0, "miniapp_page_ttl": 30.0, **MINIAPP}
    async with running(redis_url, redis_prefix, fake, flood_limiter=False, **extra) as h:
        humans = [fake.add_user(f"X{i}", language_code="en") for i in range(2)]
        ann, bob = humans
        tid, _group = await group_lobby(h, "shchelkovsky", humans, 0)
        # his page on a process that died: written once, never renewed
        dead = PagePresence(h.svc.kv, ttl=5.0, clock=h.clock)
        await dead.beat(OpenPage(tid, ann.id, "dead"))
        async with serving(h) as base, pages(base) as open_page:
            mine = {u.id: await open_page(init_data(fake.token, u.id), tid) for u in humans}
            for p in mine.values():
                await p.wait(lambda p=p: p.view)
            await quiet(h)
            before = hand_writes(fake, ann)
            assert await play_from_pages(mine, 2) >= 1
            await mine[ann.id].close()  # not his last page: the dead one lives on
            await quiet(h)
            assert hand_writes(fake, ann) == before
            h.clock.advance(6.0)  # past the dead page's time (the live ones: 30 s)
            await fake.world.wait_for(
                lambda: hand_writes(fake, ann) > before, SAFETY, "his hand drawn"
            )
            await quiet(h)
            assert hand_writes(fake, ann) == before + 1
            await shows_now(h, ann, tid)
            ui = await h.ui.table(tid)
            assert ann.id not in ui.pages  # swept
            assert bob.id in ui.pages  # his page lives on
    assert not fake.stats.errors, fake.stats.error_texts


async def test_a_flood_of_moves_through_two_processes_is_limited_at_one_total(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    extra: dict[str, Any] = {"miniapp_moves": 5, "miniapp_moves_window": 600.0, **MINIAPP}
    async with running(redis_url, redis_prefix, fake, flood_limiter=False, **extra) as h:
        humans = [fake.add_user(f"F{i}", language_code="en") for i in range(2)]
        tid, _group = await group_lobby(h, "shchelkovsky", humans, 0)
        other = BotApp(h.settings(), clock=h.clock)
        await other.setup()
        try:
            async with (
                serving(h) as near,
                serving(other) as far,
                pages(near) as open_near,
                pages(far) as open_far,
            ):
                ann = humans[0]
                two = [
                    await open_near(init_data(fake.token, ann.id), tid),
                    await open_far(init_data(fake.token, ann.id), tid),
                ]
                for p in two:
                    await p.wait(lambda p=p: p.view)
                ids = [f"f{i}" for i in range(12)]
                for n, rid in enumerate(ids):  # moves that are no moves, half through each
                    page = two[n % 2]
                    view = page.view
                    assert view is not None
                    await page.ws.send_json(
                        {"t": "move", "id": rid, "v": view["version"], "stamp": "", "a": "S2C"}
                    )
                results = [await two[n % 2].result(rid) for n, rid in enumerate(ids)]
                flood = [r for r in results if r["status"] == "flood"]
                assert len(flood) == 12 - 5, results
                assert h.bot is not None
                servers = [h.bot.app.page_server, other.page_server]
                assert sum(s.channel.moves_refused for s in servers if s) == 12 - 5
        finally:
            await other.aclose()


@pytest.fixture
async def kv_svc(store_url: str, redis_prefix: str) -> AsyncIterator[TableService]:
    """The service's key-value API on one Redis and on a cluster (every
    script's keys in one slot)."""
    svc = TableService.from_url(store_url, LiveConfig(prefix=redis_prefix))
    yield svc
    await svc.aclose()


async def test_presence_counts_a_users_last_page_and_sweeps_the_expired(
    kv_svc: TableService,
) -> None:
    clock = FakeClock()
    presence = PagePresence(kv_svc.kv, ttl=10.0, shards=2, clock=clock)
    ui = kv_svc.kv.table_key("T1", "ui")
    a1, a2, b1 = OpenPage("T1", 1, "a1"), OpenPage("T1", 1, "a2"), OpenPage("T1", 2, "b1")
    for page in (a1, a2, b1):
        await presence.beat(page)
    state = await kv_svc.kv.hgetall(ui)
    assert set(state) == {a1.field, a2.field, b1.field}
    assert await presence.close(a1) is False  # a2 is still open
    assert await presence.close(a2) is True  # his last
    assert await presence.sweep() == {}  # nothing expired
    clock.advance(5.0)
    await presence.beat(b1)  # renewed: lives to 15
    dead = OpenPage("T2", 3, "c1")
    await presence.beat(dead)  # lives to 15, never renewed
    clock.advance(11.0)  # 16: both past their time, b1 renewed late below
    await presence.beat(b1)
    assert await presence.sweep() == {"T2": [3]}
    assert await presence.sweep() == {}  # claimed once
    assert await kv_svc.kv.hgetall(kv_svc.kv.table_key("T2", "ui")) == {}
    assert set(await kv_svc.kv.hgetall(ui)) == {b1.field}


async def test_page_moves_are_counted_in_one_window_per_user(kv_svc: TableService) -> None:
    clock = FakeClock()
    one, two = (PageMoves(kv_svc.kv, 3, 2.0, clock=clock) for _ in "ab")
    got = [await (one if n % 2 else two).allow(7) for n in range(5)]
    assert got == [True, True, True, False, False]
    assert await one.allow(8)  # another player's window
    clock.advance(2.5)
    assert await two.allow(7)


async def test_each_process_sweeps_its_share_of_the_page_shards(kv_svc: TableService) -> None:
    """The expired pages' sweep takes the render sweep's share (#39: idle
    traffic that does not grow with the processes): of two live sweepers,
    each sweeps the shards ``k mod 2`` of its place, and an expired page is
    swept by the one whose share holds it."""
    clock = FakeClock()
    presence = PagePresence(kv_svc.kv, ttl=10.0, shards=2, clock=clock)
    tables = {presence.shard_of(t): t for t in (f"T{i}" for i in range(40))}
    assert set(tables) == {0, 1}
    for shard, table in tables.items():
        await presence.beat(OpenPage(table, 10 + shard, f"p{shard}"))
    clock.advance(11.0)  # both expired, their process gone
    assert await presence.sweep((0, 2)) == {tables[0]: [10]}  # shard 0 only
    assert await presence.sweep((0, 2)) == {}
    assert await presence.sweep((1, 2)) == {tables[1]: [11]}


async def test_a_processs_pages_are_renewed_together(kv_svc: TableService) -> None:
    """A process renews all its open pages at once: one script a table, one
    ZADD a shard (800 pages were 1,600 round trips in one burst, and the
    live pages' updates waited behind it).  Each page lives on as before and
    expires, swept, once renewals stop."""
    clock = FakeClock()
    presence = PagePresence(kv_svc.kv, ttl=10.0, shards=2, clock=clock)
    pages = [OpenPage(f"R{t}", 20 + u, f"r{t}{u}") for t in range(3) for u in range(2)]
    await presence.beat_many(pages)
    for t in range(3):
        fields = await kv_svc.kv.hgetall(kv_svc.kv.table_key(f"R{t}", "ui"))
        assert set(fields) == {p.field for p in pages if p.table == f"R{t}"}
    clock.advance(8.0)
    await presence.beat_many(pages)  # renewed: lives to 18
    clock.advance(8.0)
    assert await presence.sweep() == {}
    clock.advance(3.0)  # 19: none renewed since 8
    assert await presence.sweep() == {f"R{t}": [20, 21] for t in range(3)}
