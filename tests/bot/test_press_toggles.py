"""Card toggles are idempotent (issue #17): a keyboard carries the revision of the
selection it shows, a toggle is written by compare-and-set on that revision, so
one toggle delivered twice -- at once or later -- toggles once, and the copy that
lost is answered silently with his keyboard redrawn (never the opposite
selection, which the keyboard then disagrees with)."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aredis

from engine import view
from tables import LiveConfig
from telegram_bot.buttons.callbacks import PLAY, GameCb, Press, press_card
from telegram_bot.buttons.moves import Selection, resolve, stamp
from telegram_bot.state.chat_state import ChatStateStore
from telegram_bot.usecases.press import ButtonPress, PressStatus
from tests.bot.test_press import ANN, BOB, HAND, FakeClock, LosingService, Recorder, Table, wire


@pytest.fixture
async def chuvash(redis_url: str, redis_prefix: str) -> AsyncIterator[Table]:
    """A two-player Chuvash game whose leader can toggle several cards (C6)."""
    svc = LosingService(
        aredis.Redis.from_url(redis_url),
        LiveConfig(prefix=redis_prefix),
        clock=FakeClock(),
        owns_client=True,
    )
    ui = ChatStateStore.of(svc)
    delivery = Recorder()
    publisher, press = wire(svc, ui, delivery)
    for seed in range(1, 200):  # the first deal whose leader toggles a card
        svc.games.new_seed = functools.partial(int, seed)
        code = (await svc.lobbies.create_lobby(ANN, "Ann", variant="chuvash", timer=0)).table.id
        await svc.lobbies.join(code, BOB, "Bob")
        await svc.games.start(code, ANN)
        if await _toggle_card(svc, code) is not None:
            break
        await svc.admin.admin_cancel(code)
    await ui.update_table(code, hands=HAND)
    yield Table(svc, ui, delivery, press, code, publisher)
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
