"""Card toggles are idempotent (issue #17): a keyboard carries the revision of the
selection it shows, a toggle is written by compare-and-set on that revision, so
one toggle delivered twice -- at once or later -- toggles once, and the copy that
lost is answered silently with his keyboard redrawn (never the opposite
selection, which the keyboard then disagrees with).

#38 (22): a selection write records the request id it applied, in the same
compare-and-set, so a copy of a press -- at once, in another process, or later
-- is never applied a second time; and quick taps of two different cards of
one keyboard both apply (the second is no longer refused as drawn for an older
revision: no write since touched its card)."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
import redis.asyncio as aredis

from engine import view
from tables import LiveConfig
from telegram_bot.buttons.callbacks import CLEAR, PLAY, GameCb, Press, press_card
from telegram_bot.buttons.moves import Selection, resolve, stamp, written
from telegram_bot.state.chat_state import ChatStateStore, SelectionSwap
from telegram_bot.usecases.press import ButtonPress, PressButton, PressStatus
from tests.bot.test_press import ANN, BOB, HAND, FakeClock, LosingService, Recorder, Table, wire

Finder = Callable[[LosingService, str], Awaitable[object | None]]


async def _deal(redis_url: str, redis_prefix: str, wanted: Finder) -> Table:
    """A two-player Chuvash game (C6: a lead of several cards of one suit) whose
    deal ``wanted`` finds what the test needs in."""
    svc = LosingService(
        aredis.Redis.from_url(redis_url),
        LiveConfig(prefix=redis_prefix),
        clock=FakeClock(),
        owns_client=True,
    )
    ui = ChatStateStore.of(svc)
    delivery = Recorder()
    publisher, press = wire(svc, ui, delivery)
    for seed in range(1, 200):  # the first deal that has it
        svc.games.new_seed = functools.partial(int, seed)
        code = (await svc.lobbies.create_lobby(ANN, "Ann", variant="chuvash", timer=0)).table.id
        await svc.lobbies.join(code, BOB, "Bob")
        await svc.games.start(code, ANN)
        if await wanted(svc, code) is not None:
            break
        await svc.admin.admin_cancel(code)
    await ui.update_table(code, hands=HAND)
    return Table(svc, ui, delivery, press, code, publisher)


@pytest.fixture
async def chuvash(redis_url: str, redis_prefix: str) -> AsyncIterator[Table]:
    """A two-player Chuvash game whose leader can toggle several cards (C6)."""
    t = await _deal(redis_url, redis_prefix, _toggle_card)
    yield t
    await t.svc.aclose()


@pytest.fixture
async def chuvash_pair(redis_url: str, redis_prefix: str) -> AsyncIterator[Table]:
    """A two-player Chuvash game whose leader can select two cards together."""
    t = await _deal(redis_url, redis_prefix, _two_cards)
    yield t
    await t.svc.aclose()


@pytest.fixture
async def second_process(
    redis_url: str, redis_prefix: str
) -> AsyncIterator[Callable[[Table], PressButton]]:
    """The press use case of another bot process: its own Redis client, chat
    state, snapshots and publisher, on the same Redis and prefix."""
    made: list[LosingService] = []

    def of(t: Table) -> PressButton:
        svc = LosingService(
            aredis.Redis.from_url(redis_url),
            LiveConfig(prefix=redis_prefix),
            clock=FakeClock(),
            owns_client=True,
        )
        made.append(svc)
        return wire(svc, ChatStateStore.of(svc), Recorder())[1]

    yield of
    for svc in made:
        await svc.aclose()


async def _toggle_card(svc: LosingService, code: str) -> tuple[int, str, str, int] | None:
    """(leader, a card his press toggles, his stamp, the version), if there is one."""
    loaded = await svc.tables.load(code)
    assert loaded.state is not None
    seat = loaded.state.to_act()[0]
    user = loaded.table.seats[seat].user
    assert user is not None
    v = view(loaded.state, seat)
    for card in v["hand"]:
        out = resolve(v, Selection(), press_card(card))
        if out.selection is not None and out.selection.cards == (card,):
            return user, card, stamp(v), loaded.version
    return None


async def _two_cards(svc: LosingService, code: str) -> tuple[int, str, str, str, int] | None:
    """(leader, two cards he selects together -- in either order --, his stamp,
    the version), if there are two."""
    loaded = await svc.tables.load(code)
    assert loaded.state is not None
    seat = loaded.state.to_act()[0]
    user = loaded.table.seats[seat].user
    assert user is not None
    v = view(loaded.state, seat)

    def alone(card: str) -> bool:
        out = resolve(v, Selection(), press_card(card))
        return out.selection is not None and out.selection.cards == (card,)

    def joins(first: str, then: str) -> bool:
        out = resolve(v, Selection(cards=(first,)), press_card(then))
        return out.selection is not None and sorted(out.selection.cards) == sorted((first, then))

    for a in v["hand"]:
        for b in v["hand"]:
            if a < b and alone(a) and alone(b) and joins(a, b) and joins(b, a):
                return user, a, b, stamp(v), loaded.version
    return None


def _press(t: Table, user: int, version: int, p: Press, st: str, sel: str, rid: str) -> ButtonPress:
    button = GameCb.of(t.code, version, p, st, sel)
    return ButtonPress(user, button, user, HAND[user], rid)


async def _selection(t: Table, user: int) -> Selection:
    return Selection.from_json((await t.ui.table(t.code)).selections.get(user))


async def test_a_toggle_delivered_twice_at_once_toggles_once(chuvash: Table) -> None:
    t = chuvash
    found = await _toggle_card(t.svc, t.code)
    assert found is not None
    user, card, st, version = found
    press = _press(t, user, version, press_card(card), st, "0", "cb1")
    outcomes = await asyncio.gather(t.use_case(press), t.use_case(press))
    assert sorted(o.status.value for o in outcomes) == ["redrawn", "toggled"]
    assert all(o.ok for o in outcomes)  # both answered silently
    sel = await _selection(t, user)
    assert (sel.cards, sel.rev) == ((card,), 1)
    # ... and once more, later (a redelivery): the same selection, his keyboard redrawn
    again = await t.use_case(press)
    assert again.status is PressStatus.REDRAWN
    assert again.change is not None
    await t.publisher.show(again.change)
    assert (await _selection(t, user)) == sel
    assert t.delivery.edits  # redrawn: the keyboard shows what the server holds


async def test_two_different_taps_of_one_keyboard_apply_the_first(chuvash: Table) -> None:
    t = chuvash
    found = await _toggle_card(t.svc, t.code)
    assert found is not None
    user, card, st, version = found
    first = await t.use_case(_press(t, user, version, press_card(card), st, "0", "cb1"))
    assert first.status is PressStatus.TOGGLED
    # a second tap of the keyboard drawn before the first one was shown
    second = await t.use_case(_press(t, user, version, press_card(card), st, "0", "cb2"))
    assert second.status is PressStatus.REDRAWN
    assert (await _selection(t, user)).cards == (card,)
    # a tap of the redrawn keyboard (revision 1) toggles again
    third = await t.use_case(_press(t, user, version, press_card(card), st, "1", "cb3"))
    assert third.status is PressStatus.TOGGLED
    assert (await _selection(t, user)).rev == 2


async def test_play_of_another_selection_revision_makes_no_move(chuvash: Table) -> None:
    t = chuvash
    found = await _toggle_card(t.svc, t.code)
    assert found is not None
    user, card, st, version = found
    await t.use_case(_press(t, user, version, press_card(card), st, "0", "cb1"))
    stale = await t.use_case(_press(t, user, version, PLAY, st, "0", "cb2"))
    assert stale.status is PressStatus.REDRAWN
    assert (await t.svc.tables.load(t.code)).version == version
    played = await t.use_case(_press(t, user, version, PLAY, st, "1", "cb3"))
    assert played.status is PressStatus.APPLIED
    assert (await t.svc.tables.load(t.code)).version > version


async def test_an_old_keyboard_without_a_revision_is_redrawn(chuvash: Table) -> None:
    t = chuvash
    found = await _toggle_card(t.svc, t.code)
    assert found is not None
    user, card, st, version = found
    bare = GameCb.unpack(f"g:{t.code}:{version}:c{card}:{st}")
    outcome = await t.use_case(ButtonPress(user, bare, user, HAND[user], "cb1"))
    assert outcome.status is PressStatus.REDRAWN
    assert (await _selection(t, user)) == Selection()


async def test_copies_of_a_toggle_in_two_processes_toggle_once(
    chuvash: Table, second_process: Callable[[Table], PressButton]
) -> None:
    """#38 (22): one press delivered to two processes at the same instant (the
    same callback query, whichever update carries it), round after round:
    each round's card ends as the round left it once -- selected, then not."""
    t = chuvash
    other = second_process(t)
    found = await _toggle_card(t.svc, t.code)
    assert found is not None
    user, card, st, version = found
    for rev in range(6):
        press = _press(t, user, version, press_card(card), st, str(rev), f"cb{rev}")
        outcomes = await asyncio.gather(t.use_case(press), other(press), t.use_case(press))
        assert sorted(o.status.value for o in outcomes) == ["redrawn", "redrawn", "toggled"]
        sel = await _selection(t, user)
        assert (sel.cards, sel.rev) == ((card,) if rev % 2 == 0 else (), rev + 1)


async def test_two_cards_tapped_at_once_are_both_selected(
    chuvash_pair: Table, second_process: Callable[[Table], PressButton]
) -> None:
    """#38 (22): two quick taps of two cards of one keyboard, handled at once --
    by one process, then by two: both cards end selected (the second write
    lost its compare-and-set and was answered as redrawn: his tap was lost)."""
    t = chuvash_pair
    found = await _two_cards(t.svc, t.code)
    assert found is not None
    user, a, b, st, version = found
    other = second_process(t)
    for n, (one, two) in enumerate(((t.use_case, t.use_case), (t.use_case, other))):
        rev = 3 * n  # the first round: 0 -> 2, Clear -> 3
        taps = [
            _press(t, user, version, press_card(card), st, str(rev), f"cb{n}{card}")
            for card in (a, b)
        ]
        outcomes = await asyncio.gather(one(taps[0]), two(taps[1]))
        assert [o.status for o in outcomes] == [PressStatus.TOGGLED] * 2
        sel = await _selection(t, user)
        assert (sorted(sel.cards), sel.rev) == (sorted((a, b)), rev + 2)
        clear = _press(t, user, version, CLEAR, st, str(rev + 2), f"cb{n}clear")
        assert (await t.use_case(clear)).status is PressStatus.TOGGLED


async def test_quick_taps_of_two_cards_of_one_keyboard_both_apply(chuvash_pair: Table) -> None:
    """#38 (22): the second tap of a keyboard, drawn before the first tap's
    redraw, toggles its own card: no write since touched that card."""
    t = chuvash_pair
    found = await _two_cards(t.svc, t.code)
    assert found is not None
    user, a, b, st, version = found
    first = await t.use_case(_press(t, user, version, press_card(a), st, "0", "cb1"))
    second = await t.use_case(_press(t, user, version, press_card(b), st, "0", "cb2"))
    assert (first.status, second.status) == (PressStatus.TOGGLED, PressStatus.TOGGLED)
    assert sorted((await _selection(t, user)).cards) == sorted((a, b))
    # ... but a third tap of that keyboard, of a card a write since touched: a
    # double tap, redrawn (its meaning -- select it -- is gone)
    third = await t.use_case(_press(t, user, version, press_card(a), st, "0", "cb3"))
    assert third.status is PressStatus.REDRAWN
    sel = await _selection(t, user)
    assert (sorted(sel.cards), sel.rev) == (sorted((a, b)), 2)
    # ... and a copy of the second tap, later: applied once
    again = await t.use_case(_press(t, user, version, press_card(b), st, "0", "cb2"))
    assert again.status is PressStatus.REDRAWN
    assert (await _selection(t, user)).rev == 2


async def test_a_redelivered_clear_is_applied_once(chuvash: Table) -> None:
    """#38 (22): a copy of *Clear* (a selection press whatever revision it was
    drawn for) delivered after he selected again clears nothing: its request
    id is the selection's -- it wiped his new selection."""
    t = chuvash
    found = await _toggle_card(t.svc, t.code)
    assert found is not None
    user, card, st, version = found
    await t.use_case(_press(t, user, version, press_card(card), st, "0", "cb1"))
    clear = _press(t, user, version, CLEAR, st, "1", "cb2")
    assert (await t.use_case(clear)).status is PressStatus.TOGGLED
    assert (await t.use_case(_press(t, user, version, press_card(card), st, "2", "cb3"))).ok
    assert (await _selection(t, user)).cards == (card,)
    again = await t.use_case(clear)  # the copy, redelivered
    assert again.status is PressStatus.REDRAWN
    sel = await _selection(t, user)
    assert (sel.cards, sel.rev) == ((card,), 3)


async def test_the_selection_write_refuses_a_press_it_applied(chuvash: Table) -> None:
    """#38 (22): the compare-and-set of a selection also refuses a press whose
    write it holds -- at the revision that write made, or the one before."""
    t = chuvash
    one = written(Selection(), Selection(cards=("6C",)), press_card("6C"), "cb1")
    assert await t.ui.swap_selection(t.code, ANN, 0, one.to_json(), "cb1") is SelectionSwap.WRITTEN
    again = written(one, Selection(), press_card("6C"), "cb1")
    for rev in (0, 1):
        swap = await t.ui.swap_selection(t.code, ANN, rev, again.to_json(), "cb1")
        assert swap is SelectionSwap.APPLIED
    other = written(Selection(), Selection(cards=("7C",)), press_card("7C"), "cb2")
    assert await t.ui.swap_selection(t.code, ANN, 0, other.to_json(), "cb2") is SelectionSwap.MOVED
    assert not await t.ui.swap_selection(t.code, ANN, 0, other.to_json(), "cb2")
    assert await t.ui.swap_selection(t.code, ANN, 1, written(one, other, CLEAR, "cb2").to_json())
    assert (await _selection(t, ANN)).cards == ("7C",)
