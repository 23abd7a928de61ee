"""The Mini App's reads (#42): a finished game's replay and the player's own
page, over HTTP from the bot's process, each request proving its user with
the page's init data (``Authorization: tma <initData>``).  Refused without
it, with a forged one (another bot's token, a changed user id, a stale
date); a replay only for the game's players, as ``/replay`` allows; a
replay's steps are the text replay's steps and show no card it does not
show (never the stock); the player page is his own."""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import parse_qsl, urlencode

import aiohttp
import pytest

from engine.cards import card_names
from engine.replay import replay_step
from sandbox.fake_api import FakeTelegram, RateLimits
from tables import TableService
from telegram_bot.miniapp.auth import sign_init_data
from telegram_bot.views.page import SUIT_ORDER_HIGH_FIRST
from tests.bot.e2e_kit import running
from tests.bot.miniapp_kit import MINIAPP, cards_of, init_data, serving

ANN, BOB, EVE = 7101, 7102, 7103


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


async def finished_game(svc: TableService, seed: int, variant: str = "chuvash") -> str:
    """A rated game of Ann and Bob, played to its end through the service."""
    made = await svc.lobbies.create_lobby(ANN, "Ann", chat=None, variant=variant, timer=0)
    tid = made.table_id
    await svc.lobbies.join(tid, BOB, "Bob")
    await svc.games.start(tid, ANN)
    rng = random.Random(seed)
    for _ in range(5000):
        table, state, version = await svc.tables.get(tid)
        assert state is not None
        if state.over:
            return tid
        seat = rng.choice([s for s in state.to_act() if not table.seats[s].ai_controlled])
        user = table.seats[seat].user
        assert user is not None
        await svc.games.apply(tid, user, rng.choice(state.legal_actions(seat)).text(), version)
    raise AssertionError("the game did not end")


async def read(
    http: aiohttp.ClientSession, url: str, init: str | None, **query: Any
) -> tuple[int, Any]:
    headers = {} if init is None else {"Authorization": f"tma {init}"}
    async with http.get(url, params=query, headers=headers) as got:
        return got.status, await got.json()


def forged_user(init: str, user: int) -> str:
    """``init`` with another user's id put in, its hash kept."""
    fields = dict(parse_qsl(init))
    fields["user"] = fields["user"].replace(str(ANN), str(user))
    return urlencode(fields)


async def test_reads_refuse_a_page_that_proves_no_user(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, **MINIAPP) as h:
        seed = random.randrange(2**62)
        print("seed", seed)
        tid = await finished_game(h.svc, seed)
        ann = init_data(fake.token, ANN, "Ann")
        async with serving(h) as base, aiohttp.ClientSession() as http:
            replay = f"{base}/api/replay"
            q = {"table": tid, "game": "1"}
            assert (await read(http, replay, ann, **q))[0] == 200  # the control
            for url in (replay, f"{base}/api/player"):
                refused = [
                    None,  # no init data
                    "",
                    init_data("1234:another-bot-token", ANN, "Ann"),  # another bot's
                    init_data(fake.token, ANN, "Ann", age=10 * 86400),  # stale
                    forged_user(ann, BOB),  # his own init data, Bob's id put in
                    sign_init_data(fake.token, {"auth_date": int(time.time())}),  # no user
                ]
                for init in refused:
                    status, body = await read(http, url, init, **q)
                    assert status == 401, (url, init, body)
                    assert body["error"] == "refused"
                    assert "frames" not in body
                    assert "ratings" not in body
            # a well-formed page asks for what does not parse
            malformed = ({"table": tid, "game": g} for g in ("x", "²", "0", "-1", "1" * 10))
            for bad in (*malformed, {"table": "../x", "game": "1"}, {}):
                assert (await read(http, replay, ann, **bad))[0] == 400


async def test_a_replay_is_its_players_and_shows_what_the_text_replay_shows(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, **MINIAPP) as h:
        seed = random.randrange(2**62)
        print("seed", seed)
        tid = await finished_game(h.svc, seed)
        record = await h.svc.replays.record(tid, 1)
        async with serving(h) as base, aiohttp.ClientSession() as http:
            url = f"{base}/api/replay"
            q = {"table": tid, "game": "1"}
            eve = init_data(fake.token, EVE, "Eve")  # a real user, not of that game
            status, body = await read(http, url, eve, **q)
            assert (status, body["error"]) == (403, "not_allowed")
            assert body["text"] == "Only the game's players can replay it."  # as /replay says
            status, body = await read(http, url, eve, table=tid, game="2")
            assert (status, body["error"]) == (404, "no_record")
            assert "replays are kept for" in body["text"]
            status, got = await read(http, url, init_data(fake.token, BOB, "Bob", lang="ru"), **q)
            assert status == 200
            status, mine = await read(http, url, init_data(fake.token, ANN, "Ann"), **q)
            assert status == 200
    assert mine["you"] == 0
    assert got["you"] == 1
    assert [s["name"] for s in mine["seats"]] == ["Ann", "Bob"]
    assert mine["suit_order"] == list(SUIT_ORDER_HIGH_FIRST)  # C3, where trumps would be
    frames = mine["frames"]
    assert len(frames) == mine["last"] + 1
    assert got["frames"][0]["line"] == "Раздача"  # Bob's language: the bot's words
    assert got["labels"]["replay"] == "Повтор"
    assert mine["frames"][0]["line"] == "The deal"
    for k in sorted({0, 1, 2, len(frames) // 2, len(frames) - 1}):
        step = replay_step(record, k)
        frame = frames[k]
        state = step.state
        hands = [sorted(card_names(state.hand(s))) for s in range(state.players)]
        assert [sorted(h) for h in frame["hands"]] == hands  # as the text replay's Hands
        assert frame["stock_count"] == len(state.stock)
        shown = {c for h in hands for c in h} | {c for pair in frame["table"] for c in pair if c}
        if step.action is not None:
            assert frame["seat"] == step.action.seat
            shown |= set(frame["cards"])
            assert frame["line"].startswith(("Ann", "Bob"))
        # nothing else: never a card of the stock (one deck: each card once)
        assert cards_of(frame) <= shown, k
        assert not cards_of(frame) & set(card_names(list(state.stock)))
    assert frames[-1]["loser"] == record["result"]["loser"]


async def test_the_player_page_is_his_own(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, **MINIAPP) as h:
        seed = random.randrange(2**62)
        print("seed", seed)
        tid = await finished_game(h.svc, seed)
        theirs = await h.svc.ratings.of(ANN)
        async with serving(h) as base, aiohttp.ClientSession() as http:
            url = f"{base}/api/player"
            status, ann = await read(http, url, init_data(fake.token, ANN, "Ann"), user=BOB)
            assert status == 200
            status, eve = await read(http, url, init_data(fake.token, EVE, "Eve", lang="uk"))
            assert status == 200
    assert ann["user"] == ANN  # a ``user`` parameter changes nothing
    rated = ann["ratings"]["chuvash"]
    assert rated["rating"] == theirs.ratings["chuvash"].shown
    assert rated["games"] == 1
    assert [(p["table"], p["game"]) for p in rated["history"]] == [(tid, 1)]
    assert rated["history"][0]["rating"] == rated["rating"]
    assert rated["counts"]["games"] == 1
    assert ann["reliability"] == 1.0
    assert "100%" in ann["reliability_text"]
    assert [(g["table"], g["game"], g["players"]) for g in ann["games"]] == [
        (tid, 1, ["Ann", "Bob"])
    ]
    # Eve played nothing: none of Ann's games or ratings
    assert eve["user"] == EVE
    assert eve["games"] == []
    assert eve["ratings"]["chuvash"]["history"] == []
    assert eve["labels"]["history"] == "Історія рейтингу"


def test_chuvash_suit_order_is_c3() -> None:
    assert "".join(SUIT_ORDER_HIGH_FIRST) == "SHDC"  # C3: ♠ > ♥ > ♦ > ♣


async def test_a_flood_of_reads_is_refused(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """A replay is replayed through the rules: a user's reads are limited
    like his moves (``MINIAPP_MOVES`` in ``MINIAPP_MOVES_WINDOW``), another
    user's are not touched."""
    limit = {"miniapp_moves": 2, "miniapp_moves_window": 600.0}
    async with running(redis_url, redis_prefix, fake, **MINIAPP, **limit) as h:
        tid = await finished_game(h.svc, random.randrange(2**62))
        ann = init_data(fake.token, ANN, "Ann")
        async with serving(h) as base, aiohttp.ClientSession() as http:
            q = {"table": tid, "game": "1"}
            got = [(await read(http, f"{base}/api/replay", ann, **q))[0] for _ in range(2)]
            assert got == [200, 200]
            status, body = await read(http, f"{base}/api/player", ann)
            assert (status, body["error"]) == (429, "too_fast")
            bob = init_data(fake.token, BOB, "Bob")
            assert (await read(http, f"{base}/api/replay", bob, **q))[0] == 200


async def test_a_replay_asked_for_at_once_is_drawn_once(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """A drawn replay holds the GIL for up to ~0.6 s (a 4-deck game): ten
    requests at once for the same one drew it ten times and the live pages
    of the process waited for all (hostile review).  They wait for one draw."""
    async with running(redis_url, redis_prefix, fake, **MINIAPP) as h:
        seed = random.randrange(2**62)
        print("seed", seed)
        tid = await finished_game(h.svc, seed)
        assert h.bot is not None
        server = h.bot.app.page_server
        assert server is not None
        async with serving(h) as base, aiohttp.ClientSession() as http:
            q = {"table": tid, "game": "1"}
            users = [(ANN, "Ann"), (BOB, "Bob")] * 3
            got = await asyncio.gather(
                *(
                    read(http, f"{base}/api/replay", init_data(fake.token, u, n), **q)
                    for u, n in users
                )
            )
            assert [status for status, _body in got] == [200] * len(users)
            assert len({json.dumps({**body, "you": None}) for _s, body in got}) == 1
            assert server.reads.draws == 1
