"""The Mini App's pages end to end (#42): the bot process (its dispatcher on
the fake Bot API, a real Redis, the real service) serves the page and its live
channel; a page gets its viewer's view, plays a move through the use case of a
hand button, and every other page of the table sees it; a spectator's page
never shows a hidden card; forged init data and a flood of moves are refused."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from sandbox.fake_api import FakeTelegram, Message, RateLimits, SimUser
from telegram_bot.app import BotApp
from tests.bot.e2e_group_kit import group_lobby
from tests.bot.e2e_kit import SAFETY, Harness, play_out, press, running
from tests.bot.miniapp_kit import (
    MINIAPP,
    Moment,
    Page,
    cards_of,
    check_feed,
    init_data,
    moment_at,
    pages,
    public_cards,
    replay_moments,
    serving,
)


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


def to_act(view: dict[str, Any]) -> list[str]:
    game = view.get("game") or {}
    return list(game.get("legal") or [])


async def table_of_two(
    h: Harness, fake: FakeTelegram, watcher: SimUser | None = None
) -> tuple[str, list[SimUser]]:
    humans = [fake.add_user(f"P{i}", language_code="en") for i in range(2)]
    tid, _group = await group_lobby(
        h, "shchelkovsky", humans, 1, watchers=[watcher] if watcher else []
    )
    return tid, humans


async def test_a_page_plays_and_the_other_pages_follow(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False, **MINIAPP) as h:
        carol = fake.add_user("Carol <script>", language_code="en")
        tid, humans = await table_of_two(h, fake, carol)
        async with serving(h) as base, aiohttp.ClientSession() as http:
            page = await http.get(f"{base}/?t={tid}")
            assert page.status == 200
            assert "telegram-web-app.js" in await page.text()
            async with pages(base) as open_page:
                mine = {
                    u.id: await open_page(init_data(fake.token, u.id, u.user.first_name), tid)
                    for u in humans
                }
                spectator = await open_page(
                    init_data(fake.token, carol.id, carol.user.first_name), tid
                )
                for _user, p in mine.items():
                    view = await p.wait(lambda p=p: p.view)
                    assert view["table"] == tid
                    assert view["you"] is not None
                    assert view["game"]["hand"], view  # his own hand
                    assert view["stamp"]
                watched = await spectator.wait(lambda: spectator.view)
                assert watched["you"] is None
                assert "hand" not in watched["game"]
                assert "legal" not in watched["game"]
                assert not watched["stamp"]
                assert any(s["name"] == "P0" for s in watched["seats"])
                # whoever the game waits for moves from his page
                mover = await _mover(mine)
                before = mover.view
                assert before is not None
                result = await mover.move(to_act(before)[0])
                assert result["ok"], result
                assert result["status"] == "applied", result
                after = await spectator.view_after(before["version"])
                assert after["game"]["table"] or after["game"]["ply"] > before["game"]["ply"]
                for p in mine.values():
                    await p.view_after(before["version"])
    assert not fake.stats.errors, fake.stats.error_texts


async def _mover(mine: dict[int, Page]) -> Page:
    async def one() -> Page:
        while True:
            for p in mine.values():
                if p.view is not None and to_act(p.view):
                    return p
            await asyncio.sleep(0.05)

    return await asyncio.wait_for(one(), SAFETY)


async def test_a_spectators_page_never_shows_a_hidden_card(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(
        redis_url, redis_prefix, fake, flood_limiter=False, miniapp_moves=10_000, **MINIAPP
    ) as h:
        carol = fake.add_user("Carol", language_code="en")
        tid, humans = await table_of_two(h, fake, carol)
        rng = random.Random(42)
        async with serving(h) as base, pages(base) as open_page:
            spectator = await open_page(init_data(fake.token, carol.id), tid)
            mine = {u.id: await open_page(init_data(fake.token, u.id), tid) for u in humans}
            moves = 0
            while moves < 600:
                shown = [p.view for p in mine.values()]
                if any(v is not None and v["status"] != "playing" for v in shown):
                    break
                found = await _mover_or_over(mine)
                if found is None:
                    break
                mover, view = found
                legal = to_act(view)
                # Take and Pass last, so that the game moves on
                pick = [a for a in legal if a[0] not in "KP"] or legal
                result = await mover.move(rng.choice(pick), view)
                assert result["ok"], result
                moves += 1
                for p in mine.values():  # every page shows it before the next move
                    await p.view_after(result["version"] - 1)
            assert moves > 10
            for p in mine.values():  # played out: every page shows it
                await p.wait(lambda p=p: p.view is not None and p.view["status"] != "playing")
            await spectator.wait(
                lambda: (
                    spectator.view
                    and spectator.view["version"]
                    >= max(p.view["version"] for p in mine.values() if p.view)
                )
            )
        frames = [f for f in spectator.frames if f["t"] == "view"]
        assert len(frames) > 10
        for frame in frames:
            game = frame["view"]["game"]
            if game is None:
                continue
            assert not any("cards" in e for e in game["events"] if e["kind"] == "draw")
            assert cards_of(frame) <= public_cards(game), frame
        versions = [f["view"]["version"] for f in frames]
        assert versions == sorted(set(versions))  # never an older one, never twice
        # frame by frame against the table as it was at each one's version
        moments = await replay_moments(h.svc, tid)
        table, _state, _version = await h.svc.tables.get(tid)
        assert check_feed(spectator.views, moments, None) > 10
        for user, page in mine.items():  # a player: his own cards, and no other seat's
            seat = next(s for s, p in enumerate(table.seats) if p.user == user)
            assert check_feed(page.views, moments, seat) > 5
        # the check sees a leak: one other seat's card that was never public
        leaked = _leak(spectator.views, moments)
        with pytest.raises(AssertionError, match="hidden cards"):
            check_feed([leaked], moments, None)
    assert not fake.stats.errors, fake.stats.error_texts


def _leak(views: list[dict[str, Any]], moments: list[Moment]) -> dict[str, Any]:
    """A view of ``views`` with a card then hidden in a hand added to its last
    moves (as a draw's cards would show it)."""
    for view in views:
        if view["game"] is None:
            continue
        moment = moment_at(moments, view["version"])
        hidden = {c for hand in moment.hands for c in hand} - moment.public
        if hidden:
            game = {**view["game"]}
            event = {"kind": "action", "seat": 0, "detail": "", "cards": [min(hidden)]}
            game["events"] = [*game["events"], event]
            return {**view, "game": game}
    raise AssertionError("no view with a hidden card anywhere")


async def _mover_or_over(mine: dict[int, Page]) -> tuple[Page, dict[str, Any]] | None:
    """A page the game waits for, with the view it waits on (None: over)."""

    async def one() -> tuple[Page, dict[str, Any]] | None:
        while True:
            for p in mine.values():
                view = p.view
                if view is not None and view["status"] != "playing":
                    return None
                if view is not None and to_act(view):
                    return p, view
            await asyncio.sleep(0.02)

    return await asyncio.wait_for(one(), SAFETY)


@pytest.mark.parametrize("forgery", ["signature", "other_bot", "stale", "other_user"])
async def test_forged_init_data_is_refused_and_changes_nothing(
    fake: FakeTelegram, redis_url: str, redis_prefix: str, forgery: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False, **MINIAPP) as h:
        tid, humans = await table_of_two(h, fake)
        ann = humans[0]
        _, _, version = await h.svc.tables.get(tid)
        good = init_data(fake.token, ann.id)
        forged = {
            "signature": good.rsplit("hash=", 1)[0] + "hash=" + "ab" * 32,
            "other_bot": init_data("999999:" + "x" * 35, ann.id),
            "stale": init_data(fake.token, ann.id, age=2 * 86_400),
            "other_user": good.replace(f"%22id%22%3A{ann.id}", f"%22id%22%3A{humans[1].id}"),
        }[forgery]
        assert forged != good
        async with serving(h) as base, pages(base) as open_page:
            page = await open_page(forged, tid)
            await page.ws.send_json({"t": "move", "id": "x1", "v": version, "stamp": "", "a": "P"})
            refused = await page.wait(
                lambda: next((f for f in page.frames if f["t"] == "refused"), None)
            )
            assert refused["reason"] in ("signature", "stale")
            await page.wait(lambda: page.ws.closed)
            assert page.ws.close_code == 4401
            assert not page.views
        _, _, after = await h.svc.tables.get(tid)
        assert after == version


async def test_a_page_flooding_moves_is_limited(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(
        redis_url, redis_prefix, fake, flood_limiter=False, miniapp_moves=5, **MINIAPP
    ) as h:
        tid, humans = await table_of_two(h, fake)
        async with serving(h) as base, pages(base) as open_page:
            page = await open_page(init_data(fake.token, humans[0].id), tid)
            view = await page.wait(lambda: page.view)
            ids = [f"f{i}" for i in range(30)]
            for rid in ids:  # as fast as a script can: moves that are no moves
                await page.ws.send_json(
                    {
                        "t": "move",
                        "id": rid,
                        "v": view["version"],
                        "stamp": view["stamp"],
                        "a": "S2C",
                    }
                )
            results = [await page.result(rid) for rid in ids]
            flood = [r for r in results if r["status"] == "flood"]
            assert len(flood) == 25, results
            assert all(r["text"] == "Too many moves in a row: wait a moment." for r in flood)
            assert not any(r["ok"] for r in results)
            # nor may he open page after page
            more = [await open_page(init_data(fake.token, humans[0].id), tid) for _ in range(8)]
            refused = more[-1]
            await refused.wait(lambda: any(f["t"] == "refused" for f in refused.frames))
            assert refused.frames == [{"t": "refused", "reason": "too_many_pages"}]
            for page in more[:-1]:
                await page.wait(lambda page=page: page.view)
        assert h.bot is not None
        assert h.bot.app.page_server is not None
        assert h.bot.app.page_server.channel.moves_refused == 25


async def test_a_double_tap_in_page_and_button_moves_once(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False, **MINIAPP) as h:
        humans = [fake.add_user(f"D{i}", language_code="en") for i in range(2)]
        tid, _group = await group_lobby(h, "shchelkovsky", humans, 0)
        async with serving(h) as base, pages(base) as open_page:
            mine = {u.id: await open_page(init_data(fake.token, u.id), tid) for u in humans}
            attacker = await _mover(mine)
            user = next(u for u in humans if mine[u.id] is not attacker)
            # his hand message waits while his page is open (#42 point 6): it
            # is closed until his hand shows the lead, then open again
            await mine[user.id].close()
            lead = next(a for a in to_act(attacker.view or {}) if a.startswith("L"))
            led = await attacker.move(lead)
            assert led["status"] == "applied", led
            message, take = await asyncio.wait_for(_take_shown(h, user), SAFETY)
            page = await open_page(init_data(fake.token, user.id), tid)
            view = await page.wait(lambda: (v := page.view) and "K" in to_act(v) and v)
            _, _, before = await h.svc.tables.get(tid)
            # both at once: the button of his hand message and the page's Take
            answer, result = await asyncio.gather(press(user, message, take), page.move("K", view))
            _, _, after = await h.svc.tables.get(tid)
            assert after == before + 1, (answer, result)
            assert result["status"] in ("applied", "repeated"), result
            # and once more from the page, the view of before: nothing
            again = await page.move("K", view)
            assert again["status"] == "repeated", again
            assert not again.get("text")  # silent, as a double tap of a button
            _, _, still = await h.svc.tables.get(tid)
            assert still == after
    assert not fake.stats.errors, fake.stats.error_texts


async def _take_shown(h: Harness, user: SimUser) -> tuple[Message, dict[str, Any]]:
    """His hand message once it shows *Take*, and the button."""
    while True:
        message = await h.hand_message(user)
        if message is not None:
            take = next((b for b in message.buttons if b["text"] == "Take"), None)
            if take is not None:
                return message, take
        await asyncio.sleep(0.02)


async def test_a_refused_move_says_why_in_the_players_language(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False, **MINIAPP) as h:
        humans = [fake.add_user(f"R{i}", language_code="en") for i in range(2)]
        tid, _group = await group_lobby(h, "shchelkovsky", humans, 0)
        async with serving(h) as base, pages(base) as open_page:
            mine = {
                u.id: await open_page(init_data(fake.token, u.id, lang="ru"), tid) for u in humans
            }
            mover = await _mover(mine)
            waiting = next(p for p in mine.values() if p is not mover)
            view = await waiting.wait(lambda: waiting.view)
            _, _, before = await h.svc.tables.get(tid)
            refused = await waiting.move("K", view)
            assert refused["status"] == "not_your_turn", refused
            assert refused["text"] == "Сейчас не ваш ход.", refused
            hello = next(f for f in waiting.frames if f["t"] == "hello")
            assert hello["labels"]["take"] == "Беру"
            _, _, after = await h.svc.tables.get(tid)
            assert after == before


async def test_a_page_on_another_process_follows_its_table(
    fake: FakeTelegram, store_url: str, redis_prefix: str
) -> None:
    """Two bot processes on one Redis (and on a cluster: sharded pub/sub): the
    moves made through one -- hand buttons, the updates it polls -- reach the
    pages of the other; a page's move on the other reaches the first one's."""
    async with running(store_url, redis_prefix, fake, flood_limiter=False, **MINIAPP) as h:
        carol = fake.add_user("Carol", language_code="en")
        tid, humans = await table_of_two(h, fake, carol)
        other = BotApp(h.settings(), clock=h.clock)
        await other.setup()
        polling = asyncio.create_task(other.run_polling(handle_signals=False, polling_timeout=5))
        try:
            async with (
                serving(other) as far,
                serving(h) as near,
                pages(far) as open_far,
                pages(near) as open_near,
            ):
                # a spectator's page: the players press their hand messages,
                # which a page of their own would leave alone (#42 point 6)
                watcher = await open_far(init_data(fake.token, carol.id), tid)
                first = await watcher.wait(lambda: watcher.view)
                # presses of hand buttons, handled by the process that polls
                await play_out(h, tid, humans, rng=random.Random(7), stop_after=4)
                _, _, now = await h.svc.tables.get(tid)
                assert now > first["version"]
                await watcher.view_after(now - 1)
                # a move from a page of either process
                far_page = await open_far(init_data(fake.token, humans[0].id), tid)
                near_page = await open_near(init_data(fake.token, humans[1].id), tid)
                found = await _mover_or_over({0: far_page, 1: near_page})
                assert found is not None
                mover, view = found
                result = await mover.move(to_act(view)[0], view)
                assert result["ok"], result
                for page in (watcher, far_page, near_page):
                    await page.view_after(result["version"] - 1)
                assert other.page_server is not None
                assert other.page_server.hub.subscriptions >= 1
        finally:
            await other.stop_polling()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait_for(polling, SAFETY)
            await other.aclose()
