"""End to end, every kind of update delivered twice is applied once (issue #17):
the real bot (its Dispatcher, fed each update the fake Bot API queued) against
the fake Bot API and a real Redis, with each update handed over

* twice at once to one bot process (a webhook retry while the first runs),
* once to each of two bot processes at once (two ``BotApp``, each with its own
  Dispatcher and Redis client, one Redis and one fake Bot API),
* the same, with the update dedupe switched off: the writes' own request ids
  and the selection's compare-and-set still apply each press once (messages --
  commands -- are handed over once then: only the dedupe guards those).

A command (``/new``, ``/play``), and the buttons Add AI, Remove AI, Join,
a setting, Start, a card toggle, Play and a move; one card toggle carried by two
updates; two quick taps of two cards of one keyboard (#38)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import pytest

from sandbox.fake_api import Chat, FakeTelegram, Message, RateLimits, SimUser
from telegram_bot.app import BotApp
from telegram_bot.buttons.callbacks import LobbyCb, LobbyOp, Press, parse_game
from telegram_bot.buttons.moves import Selection, resolve
from tests.bot.e2e_kit import SAFETY, Harness, has_game_buttons, has_lobby_buttons

T = TypeVar("T")

MODES = {  # (bot processes, copies each process gets, update dedupe)
    "twice_to_one_process": (1, 2, True),
    "to_two_processes": (2, 1, True),
    "to_two_processes_without_dedupe": (2, 1, False),
}


@dataclass
class Processes:
    fake: FakeTelegram
    h: Harness
    apps: list[BotApp]
    copies: int
    dedupe: bool

    async def pump(self) -> None:
        """Hand every queued update to every process, ``copies`` times each, all
        copies of one update at once; until nothing more is queued."""
        world = self.fake.world
        while world.updates:
            update = world.updates.popleft()
            apps = self.apps if self.dedupe or "callback_query" in update else self.apps[:1]
            feeds = [
                app.dp.feed_raw_update(app.bot, dict(update))
                for app in apps
                for _ in range(self.copies)
            ]
            await asyncio.gather(*feeds)
        for app in self.apps:
            await app.delivery.flush()

    async def pump_at_once(self) -> None:
        """Hand every queued update over at once, spread over the processes
        (``copies`` times each): many presses arriving together."""
        world = self.fake.world
        updates = list(world.updates)
        world.updates.clear()
        feeds = []
        for n, update in enumerate(updates):
            app = self.apps[n % len(self.apps)]
            feeds += [app.dp.feed_raw_update(app.bot, dict(update)) for _ in range(self.copies)]
        await asyncio.gather(*feeds)
        await self.pump()

    async def press(self, user: SimUser, message: Message, data: str) -> dict[str, Any]:
        query = user.press(data=data, message=message)
        await self.pump()
        return await query.wait_answer(SAFETY)

    async def version(self, tid: str) -> int:
        return (await self.apps[0].svc.tables.get(tid))[2]


@pytest.fixture(params=list(MODES))
async def procs(
    request: pytest.FixtureRequest, redis_url: str, redis_prefix: str
) -> AsyncIterator[Processes]:
    count, copies, dedupe = MODES[request.param]
    async with FakeTelegram(limits=RateLimits.off()) as fake:
        h = Harness(fake, redis_url, redis_prefix, extra={"flood_limiter": False})
        settings = h.settings().model_copy(update={"update_dedupe": dedupe})
        apps = [BotApp(settings, clock=h.clock) for _ in range(count)]
        try:
            for app in apps:
                await app.setup()
            yield Processes(fake, h, apps, copies, dedupe)
        finally:
            for app in apps:
                with contextlib.suppress(Exception):
                    await app.aclose()


def lobby_data(code: str, op: LobbyOp, arg: str = "") -> str:
    return LobbyCb(code=code, op=op, arg=arg).pack()


async def group_lobby(p: Processes, users: list[SimUser]) -> tuple[Message, Chat, str]:
    owner = users[0]
    group = owner.create_group("Card night", *users[1:])
    owner.add_bot_to(group)
    for u in users:
        u.start()
    await p.pump()
    owner.send("/new chuvash", group)
    await p.pump()
    lobbies = [m for m in p.fake.world.messages(group) if has_lobby_buttons(m)]
    assert len(lobbies) == 1, [m.text for m in lobbies]  # /new delivered twice: one lobby
    table = await p.apps[0].svc.tables.where(owner.id)
    assert table is not None
    return lobbies[0], group, table.id


async def seats(p: Processes, tid: str) -> list[int | None]:
    return [s.user for s in (await p.apps[0].svc.lobbies.lobby(tid)).seats]


async def test_lobby_buttons_delivered_twice_apply_once(procs: Processes) -> None:
    p = procs
    ann, bob = (p.fake.add_user(n, language_code="en") for n in ("Ann", "Bob"))
    lobby, _group, tid = await group_lobby(p, [ann, bob])
    for n in (1, 2):  # two presses of Add AI, each delivered twice: two AI seats
        before = await p.version(tid)
        await p.press(ann, lobby, lobby_data(tid, LobbyOp.ADD_AI))
        assert await seats(p, tid) == [ann.id, *[None] * n]
        assert await p.version(tid) == before + 1
    await p.press(ann, lobby, lobby_data(tid, LobbyOp.REMOVE_AI))
    assert await seats(p, tid) == [ann.id, None]
    await p.press(bob, lobby, lobby_data(tid, LobbyOp.JOIN))
    assert await seats(p, tid) == [ann.id, None, bob.id]
    await p.press(ann, lobby, lobby_data(tid, LobbyOp.SETTINGS))
    before = await p.version(tid)
    answer = await p.press(ann, lobby, lobby_data(tid, LobbyOp.SET, "timer=30"))
    assert not answer.get("show_alert"), answer
    assert await p.version(tid) == before + 1
    assert (await p.apps[0].svc.lobbies.lobby(tid)).timer == 30
    await p.press(ann, lobby, lobby_data(tid, LobbyOp.BACK))
    answer = await p.press(ann, lobby, lobby_data(tid, LobbyOp.START))
    assert not answer.get("show_alert"), answer
    table = await p.apps[0].svc.lobbies.lobby(tid)
    assert table.game_no == 1
    for u in (ann, bob):  # one set of hand messages
        hands = [m for m in u.messages() if has_game_buttons(m)]
        assert len(hands) == 1, (u, [m.text for m in hands])
    if p.dedupe:  # without it, both copies answer: Telegram refuses the second
        assert not p.fake.stats.errors, p.fake.stats.errors


async def test_twenty_join_taps_at_once_seat_him_once(procs: Processes) -> None:
    p = procs
    ann, bob = (p.fake.add_user(n, language_code="en") for n in ("Ann", "Bob"))
    lobby, _group, tid = await group_lobby(p, [ann, bob])
    taps = [bob.press(data=lobby_data(tid, LobbyOp.JOIN), message=lobby) for _ in range(20)]
    await p.pump_at_once()
    answers = [await t.wait_answer(SAFETY) for t in taps]
    assert not [a for a in answers if a.get("show_alert")], answers
    assert await seats(p, tid) == [ann.id, bob.id]


async def test_a_solo_game_asked_for_twice_is_one_game(procs: Processes) -> None:
    p = procs
    eve = p.fake.add_user("Eve", language_code="en")
    eve.start()
    await p.pump()
    eve.send("/play chuvash")
    await p.pump()
    table = await p.apps[0].svc.tables.where(eve.id)
    assert table is not None
    assert table.game_no == 1
    assert len([m for m in eve.messages() if has_game_buttons(m)]) == 1


async def _toggle(p: Processes, tid: str, user: SimUser) -> tuple[Message, str, Selection] | None:
    """A card button of his hand message that toggles, and the selection after it."""
    svc, ui = p.apps[0].svc, p.apps[0].ui
    mid = (await ui.table(tid)).hands.get(user.id)
    if mid is None:
        return None
    message = user.chat.messages[mid]
    seat_view = (await svc.games.seat_view(tid, user.id)).view
    current = Selection.from_json((await ui.table(tid)).selections.get(user.id))
    for b in message.buttons:
        cb = parse_game(b.get("callback_data"))
        if cb is None or cb.press.kind != "card":
            continue
        out = resolve(seat_view, current, cb.press)
        if out.selection is not None and cb.press.card in out.selection.cards:
            return message, b["callback_data"], out.selection
    return None


async def test_game_presses_delivered_twice_apply_once(procs: Processes) -> None:
    p = procs
    ann, bob = (p.fake.add_user(n, language_code="en") for n in ("Ann", "Bob"))
    svc, ui = p.apps[0].svc, p.apps[0].ui
    for _game in range(10):  # deals differ: the first whose leader has a card to toggle
        lobby, _group, tid = await group_lobby(p, [ann, bob])
        await p.press(bob, lobby, lobby_data(tid, LobbyOp.JOIN))
        await p.press(ann, lobby, lobby_data(tid, LobbyOp.START))
        table, state, _v = await svc.tables.get(tid)
        assert state is not None
        leader, defender = (
            (ann, bob) if table.seats[state.to_act()[0]].user == ann.id else (bob, ann)
        )
        found = await _toggle(p, tid, leader)
        if found is not None:
            break
        for u in (ann, bob):  # free for the next deal
            await svc.lobbies.leave(tid, u.id)
    assert found is not None, "no deal had a card to toggle"
    message, data, expected = found
    before = await p.version(tid)
    answer = await p.press(leader, message, data)  # a card toggle, twice
    assert not answer.get("show_alert"), answer
    sel = Selection.from_json((await ui.table(tid)).selections.get(leader.id))
    assert sel.cards == expected.cards  # not toggled back
    assert await p.version(tid) == before
    play = _button(message, "play")  # his keyboard, redrawn with the selection
    assert play is not None, message.button_texts
    answer = await p.press(leader, message, play)  # Play, twice: one lead
    assert not answer.get("show_alert"), answer
    assert await p.version(tid) == before + 1
    hand = defender.chat.messages[(await ui.table(tid)).hands[defender.id]]
    take = _button(hand, "action", "K")
    assert take is not None, hand.button_texts
    answer = await p.press(defender, hand, take)  # a move, twice: he takes once
    assert not answer.get("show_alert"), answer
    assert await p.version(tid) == before + 2


def _button(message: Message, kind: str, action: str | None = None) -> str | None:
    """The data of the message's first game button of this kind (and action)."""
    for b in message.buttons:
        cb = parse_game(b.get("callback_data"))
        if cb is not None and cb.press.kind == kind and action in (None, cb.press.action):
            return str(b["callback_data"])
    return None


async def _leading(
    p: Processes,
    users: list[SimUser],
    find: Callable[[Processes, str, SimUser], Awaitable[T | None]],
) -> tuple[str, SimUser, T]:
    """A two-player Chuvash game whose leader's hand message has what ``find``
    (``find(p, tid, leader)``) looks for: (table, leader, what it found)."""
    ann, bob = users
    svc = p.apps[0].svc
    for _game in range(20):  # deals differ: the first that has it
        lobby, _group, tid = await group_lobby(p, users)
        await p.press(bob, lobby, lobby_data(tid, LobbyOp.JOIN))
        await p.press(ann, lobby, lobby_data(tid, LobbyOp.START))
        table, state, _v = await svc.tables.get(tid)
        assert state is not None
        leader = ann if table.seats[state.to_act()[0]].user == ann.id else bob
        found = await find(p, tid, leader)
        if found is not None:
            return tid, leader, found
        for u in users:  # free for the next deal
            await svc.lobbies.leave(tid, u.id)
    raise AssertionError("no deal had it")


async def _pair(p: Processes, tid: str, user: SimUser) -> tuple[Message, str, str] | None:
    """His hand message and two of its card buttons he selects together."""
    svc, ui = p.apps[0].svc, p.apps[0].ui
    mid = (await ui.table(tid)).hands.get(user.id)
    if mid is None:
        return None
    message = user.chat.messages[mid]
    seat_view = (await svc.games.seat_view(tid, user.id)).view
    cards: dict[str, tuple[Press, str]] = {}  # card -> its press, its button's data
    for b in message.buttons:
        cb = parse_game(b.get("callback_data"))
        if cb is not None and cb.press.kind == "card":
            out = resolve(seat_view, Selection(), cb.press)
            if out.selection is not None and out.selection.cards == (cb.press.card,):
                cards[cb.press.card] = (cb.press, b["callback_data"])

    def joins(first: str, then: str) -> bool:
        out = resolve(seat_view, Selection(cards=(first,)), cards[then][0])
        return out.selection is not None and sorted(out.selection.cards) == sorted((first, then))

    for one in cards:
        for two in cards:
            if one < two and joins(one, two) and joins(two, one):
                return message, cards[one][1], cards[two][1]
    return None


def _sel_tokens(message: Message) -> set[str]:
    """The selection revisions its card buttons were drawn for."""
    out = set()
    for b in message.buttons:
        cb = parse_game(b.get("callback_data"))
        if cb is not None and cb.press.kind == "card":
            out.add(cb.sel)
    return out


async def test_two_cards_tapped_at_once_are_both_selected(procs: Processes) -> None:
    """#38 (22): two quick taps of two cards of one keyboard, each delivered as
    the mode says, all at once: both cards end selected, and his keyboard shows
    it (the second tap was answered as redrawn and lost)."""
    p = procs
    users = [p.fake.add_user(n, language_code="en") for n in ("Ann", "Bob")]
    tid, leader, (message, a, b) = await _leading(p, users, _pair)
    ui = p.apps[0].ui
    taps = [leader.press(data=data, message=message) for data in (a, b)]
    await p.pump_at_once()
    answers = [await t.wait_answer(SAFETY) for t in taps]
    assert not [x for x in answers if x.get("show_alert") or x.get("text")], answers
    sel = Selection.from_json((await ui.table(tid)).selections.get(leader.id))
    cards = sorted(cb.press.card for cb in map(parse_game, (a, b)) if cb is not None)
    assert (sorted(sel.cards), sel.rev) == (cards, 2)
    hand = leader.chat.messages[(await ui.table(tid)).hands[leader.id]]
    assert _sel_tokens(hand) == {sel.token}, hand.button_texts


async def test_one_toggle_in_two_updates_at_once_toggles_once(procs: Processes) -> None:
    """#38 (22): one card press carried by two updates (two update ids, one
    callback query), handed over at the same instant as the mode says: the
    card ends selected, once, and his keyboard shows it."""
    p = procs
    users = [p.fake.add_user(n, language_code="en") for n in ("Ann", "Bob")]
    tid, leader, (message, data, expected) = await _leading(p, users, _toggle)
    ui = p.apps[0].ui
    tap = leader.press(data=data, message=message)
    world = p.fake.world
    world.enqueue("callback_query", dict(world.updates[-1]["callback_query"]))
    await p.pump_at_once()
    answer = await tap.wait_answer(SAFETY)
    assert not answer.get("show_alert"), answer
    sel = Selection.from_json((await ui.table(tid)).selections.get(leader.id))
    assert (sel.cards, sel.rev) == (expected.cards, 1)
    hand = leader.chat.messages[(await ui.table(tid)).hands[leader.id]]
    assert _sel_tokens(hand) == {sel.token}, hand.button_texts
