"""The button-press use case (:mod:`telegram_bot.usecases.press`) against a real
Redis through the table service, with an injected clock; no Telegram: the
publisher's delivery is a recorder."""

from __future__ import annotations

import asyncio
import contextvars
import random
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from typing import Any, cast

import pytest
import redis.asyncio as aredis
from aiogram.types import InlineKeyboardMarkup

from engine import Action, view
from engine.actions import PASS
from tables import OVER, LiveConfig, StaleVersion, TableService
from tables.games import auto_pass
from telegram_bot.buttons.callbacks import INERT, PLAY, GameCb, Press, act
from telegram_bot.buttons.moves import (
    BOUT_STAMP_LEN,
    ERR_NOT_YOUR_TURN,
    Selection,
    stamp,
    throw_room,
)
from telegram_bot.delivery import Delivery, Urgency
from telegram_bot.delivery.address import Address
from telegram_bot.handlers.game import alert
from telegram_bot.publishing.hands import HandPlacement
from telegram_bot.publishing.lobby_messages import LobbyMessages
from telegram_bot.publishing.locks import TableLocks
from telegram_bot.publishing.parts import GroupGaps, PublisherOutlets, PublisherStores
from telegram_bot.publishing.publisher import Publisher
from telegram_bot.state.chat_state import ChatStateStore
from telegram_bot.state.claims import WriteClaims
from telegram_bot.state.pending_renders import RenderMarks
from telegram_bot.state.snapshot import Snapshots
from telegram_bot.usecases.cards import MyCards
from telegram_bot.usecases.lobby import Person
from telegram_bot.usecases.player import PlayerActions
from telegram_bot.usecases.press import (
    APPLY_ATTEMPTS,
    ButtonPress,
    PressButton,
    PressOutcome,
    PressStatus,
)
from telegram_bot.views import texts
from telegram_bot.views.i18n import Translator
from tests.tables.conftest import human_move, new_table, play_out

ANN, BOB, EVE = 1, 2, 3
HAND = {ANN: 101, BOB: 201}


class FakeClock:
    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


PRESSING: contextvars.ContextVar[object | None] = contextvars.ContextVar("pressing", default=None)
"""The press whose handling (:meth:`Table.press_button`) asked for an edit."""


@dataclass
class Recorder:
    """Stands in for :class:`Delivery`: records what the publisher shows."""

    edits: list[tuple[int, int, Urgency]] = field(default_factory=list)
    gaps: dict[tuple[int, int], float | None] = field(default_factory=dict)  # the last asked
    by: list[object] = field(default_factory=list)  # each edit's press (:data:`PRESSING`)

    async def send(self, chat_id: int, text: str, markup: Any = None) -> None:
        return None

    async def edit(
        self,
        to: Address,
        text: str,
        markup: InlineKeyboardMarkup | None = None,
        urgency: Urgency = Urgency.NOW,
        version: str = "",
        gap: float | None = None,
    ) -> int | None:
        self.edits.append((*to.key, urgency))  # a hand in the group: minus its id
        self.by.append(PRESSING.get())
        self.gaps[to.key] = gap
        return to.message

    def settled(self, to: Address) -> asyncio.Future[bool]:
        done: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        done.set_result(True)
        return done


class LosingService(TableService):
    """The table service whose first ``lose`` compare-and-sets are lost to a
    write that lands just before (as when another player moves at once)."""

    lose = 0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        apply = self.games.apply

        async def losing_apply(table_id: str, user: int, *a: Any, **kw: Any) -> Any:
            if self.lose:
                self.lose -= 1
                version = (await self.tables.load(table_id)).version
                raise StaleVersion(version, version + 1)
            return await apply(table_id, user, *a, **kw)

        # the bot moves through the games part: its apply is the one to lose
        setattr(self.games, "apply", losing_apply)  # noqa: B010


@dataclass
class Table:
    svc: LosingService
    ui: ChatStateStore
    delivery: Recorder
    use_case: PressButton
    code: str
    publisher: Publisher

    async def press_button(self, press: ButtonPress) -> PressOutcome:
        """The use case as the handler runs it: the outcome (the press is answered
        with it) before any message is edited, then the publisher shows its change."""
        me = object()  # this press's edits, told from those of a press beside it
        token = PRESSING.set(me)
        try:
            outcome = await self.use_case(press)
            assert me not in self.delivery.by, "edited before the press was answered"
            await self.publisher.show(outcome.change)
        finally:
            PRESSING.reset(token)
        return outcome


def wire(
    svc: TableService, ui: ChatStateStore, delivery: Recorder, marks: RenderMarks | None = None
) -> tuple[Publisher, PressButton]:
    """The publisher and the press use case as the bot wires them (on a fake delivery)."""
    snapshots = Snapshots(svc, ui)
    locks, claims = TableLocks(), WriteClaims()
    out = cast(Delivery, delivery)
    hands = HandPlacement(svc, snapshots, ui, out, "testbot")
    lobbies = LobbyMessages(snapshots, ui, out, "testbot")
    publisher = Publisher(
        PublisherStores(snapshots, ui, locks, claims, marks=marks),
        out,
        PublisherOutlets(hands, lobbies, "testbot"),
    )
    return publisher, PressButton(svc, ui, snapshots, claims, marks=marks)


@pytest.fixture
def deal_seed() -> int | None:
    """The shuffle seed of the table's game: None, a random deal (as a table
    gets); a test whose walk needs a certain position pins it (parametrized)."""
    return None


@pytest.fixture
async def table(redis_url: str, redis_prefix: str, deal_seed: int | None) -> AsyncIterator[Table]:
    svc = LosingService(
        aredis.Redis.from_url(redis_url),
        LiveConfig(prefix=redis_prefix),
        clock=FakeClock(),
        owns_client=True,
    )
    if deal_seed is not None:
        seed = deal_seed
        svc.games.new_seed = lambda: seed
    ui = ChatStateStore.of(svc)
    delivery = Recorder()
    publisher, press = wire(svc, ui, delivery)
    code = (await svc.lobbies.create_lobby(ANN, "Ann", variant="shchelkovsky", timer=0)).table.id
    await svc.lobbies.join(code, BOB, "Bob")
    await svc.games.start(code, ANN)
    await ui.update_table(code, hands=HAND)
    yield Table(svc, ui, delivery, press, code, publisher)
    await svc.aclose()


async def situation(t: Table) -> tuple[int, int, list[str], str]:
    """(the version, the user to move, his legal actions, his stamp)."""
    loaded = await t.svc.tables.load(t.code)
    assert loaded.state is not None
    seat = loaded.state.to_act()[0]
    user = loaded.table.seats[seat].user
    assert user is not None
    v = view(loaded.state, seat)
    return loaded.version, user, list(v["legal"]), stamp(v)


def pressing(
    t: Table, user: int, version: int, press: Press, stamp_: str = "", **over: Any
) -> ButtonPress:
    fields: dict[str, Any] = {
        "user": user,
        "button": GameCb.of(t.code, version, press, stamp_),
        "chat": user,
        "message_id": HAND.get(user, 999),
        "request_id": f"cb{user}-{version}-{press.payload}",
    }
    return ButtonPress(**{**fields, **over})


async def test_a_legal_move_is_applied_and_his_message_refreshed_at_once(table: Table) -> None:
    t = table
    version, user, legal, st = await situation(t)
    outcome = await t.press_button(pressing(t, user, version, act(legal[0]), st))
    assert outcome.status is PressStatus.APPLIED
    assert outcome.ok
    assert outcome.version == version + 1
    assert (await t.svc.tables.load(t.code)).version == version + 1
    assert (user, HAND[user], Urgency.NOW) in t.delivery.edits


class CountedMarks(RenderMarks):
    """The pending-render marks, counting the renders marked."""

    marked: list[tuple[str, int]]

    async def set(self, table_id: str, version: int) -> bool:
        self.marked.append((table_id, version))
        return await super().set(table_id, version)


async def test_a_move_reads_its_table_once_and_marks_its_render_once(
    table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    """#39: one read per press -- the use case's snapshot decides the move, the
    service's compare-and-set writes over it and the render draws the move
    from what the write returned (reading only the chat state); its render is
    marked pending once, before the write (#28).  (It read the table three
    times and marked the render twice.)"""
    t = table
    marks = CountedMarks(t.svc.kv)
    marks.marked = []
    publisher, use_case = wire(t.svc, t.ui, t.delivery, marks)
    t = replace(t, publisher=publisher, use_case=use_case)
    version, user, legal, st = await situation(t)
    loads: list[str] = []
    load = t.svc.tables.load

    async def counted(table_id: str) -> Any:
        loads.append(table_id)
        return await load(table_id)

    monkeypatch.setattr(t.svc.tables, "load", counted)
    edits = len(t.delivery.edits)
    outcome = await t.press_button(pressing(t, user, version, act(legal[0]), st))
    assert outcome.status is PressStatus.APPLIED
    assert loads == [t.code], "the table read more than once in a press"
    assert marks.marked == [(t.code, version + 1)], "its render marked more than once"
    # what the render drew is the move made: his message shows the new version
    assert (user, HAND[user], Urgency.NOW) in t.delivery.edits[edits:]
    assert publisher.shown[t.code] == version + 1


async def test_a_redelivered_press_is_applied_once(table: Table) -> None:
    t = table
    version, user, legal, st = await situation(t)
    press = pressing(t, user, version, act(legal[0]), st)
    first, again = await asyncio.gather(t.press_button(press), t.press_button(press))
    assert {first.status, again.status} == {PressStatus.APPLIED, PressStatus.DUPLICATE}
    assert first.version == again.version == version + 1
    assert (await t.svc.tables.load(t.code)).version == version + 1
    # delivered again later: his hand changed meanwhile (another stamp), but the
    # press was applied -- a success, not "out of date" (issue #17)
    later = await t.press_button(press)
    assert (later.status, later.version) == (PressStatus.DUPLICATE, version + 1)
    assert (await t.svc.tables.load(t.code)).version == version + 1


async def test_a_selection_press_toggles_without_a_write(table: Table) -> None:
    t = table
    version, user, _legal, st = await situation(t)
    outcome = await t.press_button(pressing(t, user, version, INERT, st))
    assert outcome.status is PressStatus.TOGGLED
    assert (await t.svc.tables.load(t.code)).version == version
    assert (await t.ui.table(t.code)).selections[user] is not None
    assert t.delivery.edits == [(user, HAND[user], Urgency.NOW)]


async def test_a_player_without_a_move_is_told_it_is_not_his_turn(table: Table) -> None:
    t = table
    version, user, _legal, _st = await situation(t)
    other = BOB if user == ANN else ANN
    loaded = await t.svc.tables.load(t.code)
    assert loaded.state is not None
    seat = loaded.table.seat_of(other)
    assert seat is not None
    st = stamp(view(loaded.state, seat))
    outcome = await t.press_button(pressing(t, other, version, act("K"), st))
    assert outcome.status is PressStatus.NOT_YOUR_TURN
    assert not outcome.ok
    assert outcome.reason == ERR_NOT_YOUR_TURN
    assert (await t.svc.tables.load(t.code)).version == version


async def test_a_double_tap_of_a_move_is_silent_and_redrawn(table: Table) -> None:
    t = table
    version, user, legal, st = await situation(t)
    await t.press_button(pressing(t, user, version, act(legal[0]), st))
    t.delivery.edits.clear()
    outcome = await t.press_button(pressing(t, user, version, act(legal[0]), st, request_id="x"))
    assert outcome.status is PressStatus.REPEATED  # he moved from that keyboard (issue 13)
    assert outcome.ok  # answered without a text
    assert (await t.svc.tables.load(t.code)).version == version + 1
    assert t.delivery.edits == [(user, HAND[user], Urgency.NOW)]


async def test_a_double_tap_after_the_log_was_flushed_is_silent(table: Table) -> None:
    """#41 (the 4-player bench's last stale toasts): the double-tap check read
    only the table's open chunk of the log; when his move's write flushed the
    chunk to the log's stream, his second tap of Take got a stale toast."""
    t = table
    t.svc.tables.config = replace(t.svc.tables.config, log_chunk=1)  # every write flushes
    version, user, legal, st = await situation(t)
    await t.press_button(pressing(t, user, version, act(legal[0]), st))
    loaded = await t.svc.tables.load(t.code)
    assert loaded.log == ""  # flushed: the open chunk holds nothing of his move
    outcome = await t.press_button(pressing(t, user, version, act(legal[0]), st, request_id="x"))
    assert outcome.status is PressStatus.REPEATED
    assert (await t.svc.tables.load(t.code)).version == version + 1


async def test_an_old_button_with_another_stamp_is_stale_and_redrawn(table: Table) -> None:
    t = table
    version, user, legal, st = await situation(t)
    await t.press_button(pressing(t, user, version, act(legal[0]), st))
    other = BOB if user == ANN else ANN
    t.delivery.edits.clear()
    # the other player's keyboard of before that move, with a stamp that no longer
    # holds: he did not move from it, so it is stale, not a double tap
    outcome = await t.press_button(pressing(t, other, version, act("K"), "AAAAAA", request_id="y"))
    assert outcome.status is PressStatus.STALE
    assert not outcome.ok
    assert (await t.svc.tables.load(t.code)).version == version + 1
    assert t.delivery.edits == [(other, HAND[other], Urgency.NOW)]


async def test_a_lost_compare_and_set_is_tried_again(table: Table) -> None:
    t = table
    version, user, legal, st = await situation(t)
    t.svc.lose = 2
    outcome = await t.press_button(pressing(t, user, version, act(legal[0]), st))
    assert outcome.status is PressStatus.APPLIED
    assert t.svc.lose == 0


async def test_a_press_losing_a_race_to_each_other_seat_is_applied(table: Table) -> None:
    """#41: at an 8-seat table the throwers pass in the same second: a press
    that loses a race to several of them (the bench: 3) is still applied."""
    t = table
    version, user, legal, st = await situation(t)
    t.svc.lose = 7
    outcome = await t.press_button(pressing(t, user, version, act(legal[0]), st))
    assert outcome.status is PressStatus.APPLIED, outcome  # was STALE from 3 on
    assert t.svc.lose == 0


async def test_a_press_losing_every_race_is_stale(table: Table) -> None:
    t = table
    version, user, legal, st = await situation(t)
    t.svc.lose = APPLY_ATTEMPTS
    outcome = await t.press_button(pressing(t, user, version, act(legal[0]), st))
    assert outcome.status is PressStatus.STALE
    assert (await t.svc.tables.load(t.code)).version == version
    assert (user, HAND[user], Urgency.NOW) in t.delivery.edits  # refreshed for him


async def test_only_the_presser_own_hand_message_counts(table: Table) -> None:
    t = table
    version, user, legal, st = await situation(t)
    press = act(legal[0])
    wrong_message = pressing(t, user, version, press, st, message_id=HAND[user] + 1)
    other_chat = pressing(t, user, version, press, st, chat=-100)
    stranger = pressing(t, EVE, version, press, st)
    assert (await t.press_button(wrong_message)).status is PressStatus.NOT_YOUR_MESSAGE
    assert (await t.press_button(other_chat)).status is PressStatus.NOT_YOUR_MESSAGE
    assert (await t.press_button(stranger)).status is PressStatus.NOT_SEATED
    assert (await t.svc.tables.load(t.code)).version == version
    assert not t.delivery.edits


async def test_presses_after_the_game_are_refused(table: Table) -> None:
    t = table
    version, user, legal, st = await situation(t)
    await t.svc.admin.admin_reset(t.code)
    outcome = await t.press_button(pressing(t, user, version, act(legal[0]), st))
    assert outcome.status is PressStatus.GAME_OVER


async def test_an_unknown_table_is_refused_by_the_service(table: Table) -> None:
    t = table
    press = pressing(t, ANN, 1, INERT)
    outcome = await t.press_button(
        ButtonPress(ANN, GameCb.of("nosuch", 1, INERT), ANN, HAND[ANN], press.request_id)
    )
    assert outcome.status is PressStatus.REFUSED
    assert outcome.error is not None


async def test_a_refused_press_leaves_no_read_running(
    table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The table is gone, its chat state's read answers later (a loaded machine):
    the press is refused once both reads ended -- a read left running outlives
    the press and may take a connection after the client closed (a socket left
    unclosed: this file's teardown ResourceWarning under load)."""
    t = table
    table_failed = asyncio.Event()
    ui_reads: list[str] = []
    load, read = t.svc.tables.load, t.ui.table

    async def load_then_signal(table_id: str) -> Any:
        try:
            return await load(table_id)
        finally:
            table_failed.set()

    async def late_read(table_id: str) -> Any:
        await table_failed.wait()  # its reply comes after the table's failure
        ui = await read(table_id)
        ui_reads.append(table_id)
        return ui

    monkeypatch.setattr(t.svc.tables, "load", load_then_signal)
    monkeypatch.setattr(t.ui, "table", late_read)
    outcome = await t.press_button(
        ButtonPress(ANN, GameCb.of("nosuch", 1, INERT), ANN, HAND[ANN], "gone")
    )
    assert outcome.status is PressStatus.REFUSED
    assert ui_reads == ["nosuch"]  # ended before the press was answered


async def until_a_pass(t: Table) -> tuple[int, int]:
    """Play the table on (first legal moves) until a seat may pass: (version, user)."""
    for _ in range(500):
        table, state, version = await t.svc.tables.get(t.code)
        assert state is not None
        for seat in range(state.players):
            if "P" in [a.text() for a in state.legal_actions(seat)]:
                user = table.seats[seat].user
                assert user is not None
                return version, user
        seat = state.to_act()[0]
        user = table.seats[seat].user
        assert user is not None
        await t.svc.games.apply(t.code, user, state.legal_actions(seat)[-1].text(), version)
    raise AssertionError("nobody could pass")


async def test_a_pass_still_legal_is_applied_from_an_old_keyboard(table: Table) -> None:
    # Pass/Done pressed just after the table changed: it means what it meant
    t = table
    version, user = await until_a_pass(t)
    loaded = await t.svc.tables.load(t.code)
    assert loaded.state is not None
    seat = loaded.table.seat_of(user)
    assert seat is not None
    now = stamp(view(loaded.state, seat))
    old = now[:BOUT_STAMP_LEN] + ("AAAA" if now[BOUT_STAMP_LEN:] != "AAAA" else "BBBB")
    outcome = await t.press_button(pressing(t, user, version - 1, act("P"), old))
    assert outcome.status is PressStatus.APPLIED
    assert (await t.svc.tables.load(t.code)).version > version


async def test_a_second_tap_of_pass_makes_no_second_move(table: Table) -> None:
    """#28: a double tap of Pass: the second tap comes from a keyboard he already
    moved from; a Pass still legal then (in the same bout) must not be applied
    again -- it would answer a throw-in he never saw."""
    t = table
    for _ in range(50):
        version, user = await until_a_pass(t)
        loaded = await t.svc.tables.load(t.code)
        assert loaded.state is not None
        seat = loaded.table.seat_of(user)
        assert seat is not None
        # a keyboard of his drawn before a move of his in this bout
        older = next((v for v in range(version - 1, 0, -1) if loaded.moved_since(seat, v)), None)
        if older is not None:
            break
        await t.svc.games.apply(t.code, user, "P", version)
    else:
        raise AssertionError("no seat could pass after a move of its own")
    now = stamp(view(loaded.state, seat))
    old = now[:BOUT_STAMP_LEN] + ("AAAA" if now[BOUT_STAMP_LEN:] != "AAAA" else "BBBB")
    outcome = await t.press_button(pressing(t, user, older, act("P"), old))
    assert outcome.status is PressStatus.REPEATED
    assert outcome.ok  # answered silently
    assert (await t.svc.tables.load(t.code)).version == version  # no move


async def test_a_pass_from_another_bout_is_stale(table: Table) -> None:
    t = table
    version, user = await until_a_pass(t)
    loaded = await t.svc.tables.load(t.code)
    assert loaded.state is not None
    seat = loaded.table.seat_of(user)
    assert seat is not None
    other_bout = "BBBBBB" if stamp(view(loaded.state, seat)).startswith("AA") else "AAAAAA"
    outcome = await t.press_button(pressing(t, user, version - 1, act("P"), other_bout))
    assert outcome.status in (PressStatus.STALE, PressStatus.REPEATED)
    assert (await t.svc.tables.load(t.code)).version == version


@pytest.mark.parametrize("in_group", [True, False])
async def test_the_group_table_goes_less_often_while_a_hand_is_in_the_group(
    redis_url: str, redis_prefix: str, in_group: bool
) -> None:
    """#24: with the hands in the group (ephemeral messages: their ids negative)
    the group's table message is asked with the publisher's in-group gap, and so
    is the hand of the player who only watches the move; with every hand
    private, the delivery's own (None)."""
    svc = TableService.from_url(redis_url, LiveConfig(prefix=redis_prefix))
    ui = ChatStateStore.of(svc)
    delivery = Recorder()
    out = cast(Delivery, delivery)
    snapshots = Snapshots(svc, ui)
    publisher = Publisher(
        PublisherStores(snapshots, ui, TableLocks(), WriteClaims()),
        out,
        PublisherOutlets(
            HandPlacement(svc, snapshots, ui, out, "testbot"),
            LobbyMessages(snapshots, ui, out, "testbot"),
            "testbot",
        ),
        GroupGaps(table=12.0, later=6.0),
    )
    group, table_message = -500, 77
    try:
        r = await svc.lobbies.create_lobby(ANN, "Ann", chat=group, variant="chuvash", timer=0)
        await svc.lobbies.join(r.table.id, BOB, "Bob")
        await svc.games.start(r.table.id, ANN)
        hands = {ANN: -9, BOB: -8} if in_group else {ANN: 101, BOB: 201}
        await ui.update_table(r.table.id, hands=hands, table_message=table_message)
        await publisher.refresh(r.table.id)
        assert (group, table_message, Urgency.TABLE) in delivery.edits
        assert delivery.gaps[(group, table_message)] == (12.0 if in_group else None)
        urgencies = {key: u for _chat, key, u in delivery.edits if key != table_message}
        assert sorted(urgencies.values(), key=str) == [Urgency.LATER, Urgency.SOON]
        for key, urgency in urgencies.items():  # the one who only watches: less often
            watches = in_group and urgency is Urgency.LATER
            chat = {m: group if m < 0 else user for user, m in hands.items()}[key]
            assert delivery.gaps[(chat, key)] == (6.0 if watches else None), (key, urgency)
    finally:
        await svc.aclose()


async def until_a_throw_in_or_cover(t: Table, kind: str) -> tuple[int, int, str, int]:
    """Play the table on (first legal moves) until a seat may make a move of
    ``kind`` ('T' throw-in, 'C' cover) from a keyboard of an older version he
    did not move from: (version, user, the move, that older version)."""
    for _ in range(2000):
        table, state, version = await t.svc.tables.get(t.code)
        assert state is not None
        if state.over:
            break
        loaded = await t.svc.tables.load(t.code)
        for seat in range(state.players):
            texts = [a.text() for a in state.legal_actions(seat)]
            move = next((x for x in texts if x.startswith(kind)), None)
            if move is not None and version > 1 and not loaded.moved_since(seat, version - 1):
                user = table.seats[seat].user
                assert user is not None
                return version, user, move, version - 1
        seat = state.to_act()[0]
        user = table.seats[seat].user
        assert user is not None
        await t.svc.games.apply(t.code, user, state.legal_actions(seat)[0].text(), version)
    raise AssertionError(f"no {kind} move came up")


@pytest.mark.parametrize("kind", ["T", "C"])
async def test_a_throw_in_or_cover_still_legal_is_applied_from_an_old_keyboard(
    table: Table, kind: str
) -> None:
    """#29: a throw-in or a cover named whole, pressed on a keyboard drawn before
    another move of the same bout, means what it meant (his stamp changed with
    the table: the priority, the throw-in room) -- applied, not a stale toast."""
    t = table
    version, user, move, older = await until_a_throw_in_or_cover(t, kind)
    loaded = await t.svc.tables.load(t.code)
    assert loaded.state is not None
    seat = loaded.table.seat_of(user)
    assert seat is not None
    now = stamp(view(loaded.state, seat))
    old = now[:BOUT_STAMP_LEN] + ("AAAA" if now[BOUT_STAMP_LEN:] != "AAAA" else "BBBB")
    outcome = await t.press_button(pressing(t, user, older, act(move), old))
    assert outcome.status is PressStatus.APPLIED, outcome
    after = await t.svc.tables.load(t.code)
    assert after.version == version + 1
    # a Take from such a keyboard: none of a thrower's, nor a second move of the
    # defender who covered (a double tap); the defender's own: the #41 test below
    other = await t.press_button(pressing(t, user, older, act("K"), old, request_id="k"))
    assert other.status in (PressStatus.STALE, PressStatus.REPEATED), other


THROW_IN_DEALS = [
    pytest.param(105, id="deal105"),  # its first two-card throw-in: his last 10s on a taken 10C
    pytest.param(76, id="deal76"),  # likewise: his last 10s on a taken 10C
    pytest.param(0, id="deal0"),
]
"""Deals (shuffle seeds) of the two-card throw-in tests, pinned: a random deal
offers no such position in about one game in 200 (seeds 16, 71)."""


async def until_two_throw_ins(t: Table) -> tuple[int, int, list[str], dict[str, Any]]:
    """Play on until a seat may throw in two cards at once, from a keyboard of the
    version before (he did not move since), while the defender covers: (version,
    seat, two cards, his view).  Once the defender has declared TAKE, a throw-in
    after which nobody has a throw-in left ends the bout at once (RULES §0, the
    end of a bout): the defender takes, everybody draws up to six (RULES §0
    Drawing) and the thrower's hand is no longer his hand without those cards
    (deal 105: he threw his last two 10s on a taken 10C and drew 6D, JH, JH).
    While the defender covers, the thrown cards stand uncovered and the bout goes on."""
    for _ in range(2000):
        table_, state, version = await t.svc.tables.get(t.code)
        assert state is not None
        assert not state.over, "no two-card throw-in came up"
        loaded = await t.svc.tables.load(t.code)
        found = None
        for seat in range(state.players):
            v = view(state, seat)
            throws = sorted({a[1:] for a in v["legal"] if a.startswith("T")})
            if (
                len(throws) >= 2
                and throw_room(v) >= 2
                and not v["taking"]
                and version > 1
                and not loaded.moved_since(seat, version - 1)
            ):
                found = seat, throws[:2], v
                break
        if found is not None:
            break
        seat = state.to_act()[0]
        user = table_.seats[seat].user
        assert user is not None
        await t.svc.games.apply(t.code, user, state.legal_actions(seat)[0].text(), version)
    else:
        raise AssertionError("no two-card throw-in came up")
    seat, cards, v = found
    return version, seat, cards, v


@pytest.mark.parametrize("deal_seed", THROW_IN_DEALS)
async def test_a_play_of_several_throw_ins_still_legal_is_applied_from_an_old_keyboard(
    table: Table,
) -> None:
    """#29: *Play* of two throw-in cards he chose (his selection unchanged), pressed
    on a keyboard drawn before another move of the same bout: the move is not one
    of his single-card legal actions, yet it is still legal -- applied, not stale."""
    t = table
    version, seat, cards, v = await until_two_throw_ins(t)
    user = (await t.svc.tables.get(t.code))[0].seats[seat].user
    assert user is not None
    chosen = Selection(cards=tuple(cards), rev=1)
    assert await t.ui.swap_selection(t.code, user, 0, chosen.to_json())
    now = stamp(v)
    old = now[:BOUT_STAMP_LEN] + ("AAAA" if now[BOUT_STAMP_LEN:] != "AAAA" else "BBBB")
    button = GameCb.of(t.code, version - 1, PLAY, old, sel=chosen.token)
    outcome = await t.press_button(pressing(t, user, version - 1, PLAY, old, button=button))
    assert outcome.status is PressStatus.APPLIED, outcome
    after = await t.svc.tables.load(t.code)
    assert after.version == version + 1
    assert after.state is not None
    v_after = view(after.state, seat)
    assert Counter(a for a, cover in v_after["table"] if cover is None) >= Counter(cards)
    hand = Counter(v_after["hand"])
    assert hand == Counter(v["hand"]) - Counter(cards)  # both cards left his hand


@pytest.mark.parametrize("deal_seed", THROW_IN_DEALS)
async def test_a_card_ticked_on_an_old_keyboard_of_the_same_bout_is_ticked(table: Table) -> None:
    """#29: he ticks a throw-in card on a keyboard drawn before another move of the
    same bout (his selection unchanged): no move is made, so it is ticked on his
    keyboard of now -- not a stale toast; from another bout it is stale."""
    t = table
    version, seat, cards, v = await until_two_throw_ins(t)
    user = (await t.svc.tables.get(t.code))[0].seats[seat].user
    assert user is not None
    now = stamp(v)
    old = now[:BOUT_STAMP_LEN] + ("AAAA" if now[BOUT_STAMP_LEN:] != "AAAA" else "BBBB")
    card = Press("card", card=cards[0])
    token = Selection().token
    button = GameCb.of(t.code, version - 1, card, old, sel=token)
    outcome = await t.press_button(pressing(t, user, version - 1, card, old, button=button))
    assert outcome.status is PressStatus.TOGGLED, outcome
    assert Selection.from_json((await t.ui.table(t.code)).selections.get(user)).cards == (cards[0],)
    assert (await t.svc.tables.load(t.code)).version == version  # no move
    n = BOUT_STAMP_LEN
    other_bout = ("B" * n if now.startswith("A" * n) else "A" * n) + now[n:]
    card2 = Press("card", card=cards[1])
    token = Selection(cards=(cards[0],), rev=1).token
    button = GameCb.of(t.code, version - 1, card2, other_bout, sel=token)
    outcome = await t.press_button(
        pressing(t, user, version - 1, card2, other_bout, button=button, request_id="x2")
    )
    assert outcome.status is PressStatus.STALE, outcome


async def test_a_press_after_the_game_says_it_is_over_and_what_now(table: Table) -> None:
    """#41: after the game, his hand's buttons -- of his last hand message or of an
    older one -- say the game is over and what he can do now, not "your cards
    are in a newer message" (none is); *My cards* and *Open my table* too, where
    they said "You do not play at this table."."""
    t = table
    version, user, legal, st = await situation(t)
    await play_out(t.svc, t.code, random.Random(5))
    assert (await t.svc.tables.load(t.code)).table.status == OVER
    _ = Translator("en")
    for message_id in (HAND[user], HAND[user] + 1):
        press = pressing(t, user, version, act(legal[0]), st, message_id=message_id)
        outcome = await t.press_button(press)
        assert outcome.status is PressStatus.GAME_OVER
        assert alert(outcome, _) == _(texts.REFUSALS["game_over"])
    assert "🔁 Rematch" in _(texts.REFUSALS["game_over"])
    cards = await MyCards(t.svc)(t.code, user, "q1")
    assert cards.said == texts.REFUSALS["game_over"]
    player = PlayerActions(t.svc, t.ui, cast(Any, None), cast(Any, None), cast(Any, None))
    opened = await player.open_table(t.code, Person(user, "Ann", "en"))
    assert opened.error is not None
    assert opened.error.code == "game_over"


async def until_priority_lost(
    svc: TableService, code: str, rng: random.Random
) -> tuple[int, int, str, int]:
    """Play on (random legal moves) until the defender has a cover after which
    the seat holding the throw-in priority holds it no more (RULES §0 Throw-in
    priority: a change of the table returns it to the first attacker; the seats
    that pass by themselves as the table makes them): (version, the defender's
    user, the cover, that seat)."""
    for _ in range(5000):
        table_, state, version = await svc.tables.get(code)
        assert state is not None
        assert not state.over, "no lost priority came up"
        holder = state.priority()
        if holder >= 0 and state.defender in state.to_act():
            for cover in state.legal_actions(state.defender):
                if not cover.text().startswith("C"):
                    continue
                after = state.copy()
                after.apply(cover)
                while (passer := auto_pass(table_, after)) is not None:
                    after.apply(Action(passer, PASS))
                if holder not in after.to_act():
                    user = table_.seats[state.defender].user
                    assert user is not None
                    return version, user, cover.text(), holder
        await human_move(svc, code, rng)
    raise AssertionError("no lost priority came up")


async def test_a_thrower_whose_priority_went_away_sees_it_at_once(
    redis_url: str, redis_prefix: str
) -> None:
    """#41: the thrower who holds the priority (his keyboard offers throw-ins)
    loses it to a cover (RULES §0 Throw-in priority): his hand is redrawn at
    once, like the actor's -- as a watcher's (a couple of seconds late) he taps
    a throw-in that is no longer his to make and gets a stale toast (the
    8-player bench: a card tap after ``[act:C, autopass:P ...]``).  Who only
    watches, before and after, still gets his hand less often."""
    svc = TableService.from_url(redis_url, LiveConfig(prefix=redis_prefix))
    ui = ChatStateStore.of(svc)
    delivery = Recorder()
    publisher, use_case = wire(svc, ui, delivery)
    try:
        svc.games.new_seed = lambda: 41  # a deal pinned: the position comes up early
        code = await new_table(svc, 4, variant="shchelkovsky", chat=None, rated=False)
        hands = {user: 100 + user for user in range(1, 5)}
        await ui.update_table(code, hands=hands)
        version, defender, cover, holder = await until_priority_lost(svc, code, random.Random(7))
        table_, state, _v = await svc.tables.get(code)
        assert state is not None
        waited = set(state.to_act())
        await publisher.refresh(code)  # the keyboards of now: the holder's offers throw-ins
        delivery.edits.clear()
        seat = table_.seat_of(defender)
        assert seat is not None
        st = stamp(view(state, seat))
        press = ButtonPress(
            defender,
            GameCb.of(code, version, act(cover), st),
            defender,
            hands[defender],
            "cb-cover",
        )
        outcome = await use_case(press)
        assert outcome.status is PressStatus.APPLIED, outcome
        await publisher.show(outcome.change)
        _t, after, _v2 = await svc.tables.get(code)
        assert after is not None
        assert holder not in after.to_act()
        urgency = {chat: u for chat, _m, u in delivery.edits}
        thrower = table_.seats[holder].user
        assert thrower is not None
        assert urgency[defender] is Urgency.NOW
        assert urgency[thrower] is Urgency.NOW, urgency  # was LATER: a stale toast
        watchers = [
            s.user
            for i, s in enumerate(table_.seats)
            if i not in waited | set(after.to_act()) and s.user in urgency
        ]
        assert all(urgency[u] is Urgency.LATER for u in watchers), urgency
    finally:
        await svc.aclose()


async def test_a_take_pressed_before_a_throw_in_of_the_bout_is_applied(
    redis_url: str, redis_prefix: str
) -> None:
    """#41: the defender taps Take while a thrower throws in: the Take still
    legal in the same bout means what it meant -- he would have taken that card
    too had his Take come first (RULES §0 Take, S11: throwers still throw in
    after it) -- so it is applied, not a stale toast (the 8-player bench: a
    Take after ``[act:T ...]``).  From another bout it stays stale."""
    svc = TableService.from_url(redis_url, LiveConfig(prefix=redis_prefix))
    ui = ChatStateStore.of(svc)
    delivery = Recorder()
    _publisher, use_case = wire(svc, ui, delivery)
    rng = random.Random(3)
    try:
        svc.games.new_seed = lambda: 41  # a deal pinned: the position comes up early
        code = await new_table(svc, 4, variant="shchelkovsky", chat=None, rated=False)
        hands = {user: 100 + user for user in range(1, 5)}
        await ui.update_table(code, hands=hands)
        for _ in range(5000):
            table_, state, version = await svc.tables.get(code)
            assert state is not None
            assert not state.over, "no throw-in against a defender who may take came up"
            holder = state.priority()
            defender = state.defender
            taking = [a.text() for a in state.legal_actions(defender)]
            throws = [a.text() for a in state.legal_actions(holder)] if holder >= 0 else []
            throws = [x for x in throws if x.startswith("T")]
            if holder != defender and "K" in taking and throws:
                after = state.copy()
                after.apply(Action.from_text(holder, throws[0]))
                if stamp(view(after, defender)) != stamp(view(state, defender)):
                    break  # his keyboard changes with the throw-in
            await human_move(svc, code, rng)
        else:
            raise AssertionError("no throw-in against a defender who may take came up")
        old = stamp(view(state, defender))
        thrower, taker = table_.seats[holder].user, table_.seats[defender].user
        assert thrower is not None
        assert taker is not None
        await svc.games.apply(code, thrower, throws[0], version)
        now = await svc.tables.load(code)
        assert now.state is not None
        assert stamp(view(now.state, defender)) != old  # his keyboard changed with the table

        def take(stamp_: str, request: str) -> ButtonPress:
            button = GameCb.of(code, version, act("K"), stamp_)
            return ButtonPress(taker, button, taker, hands[taker], request)

        n = BOUT_STAMP_LEN
        other_bout = ("B" * n if old.startswith("A" * n) else "A" * n) + old[n:]
        outcome = await use_case(take(other_bout, "cb-k1"))
        assert outcome.status is PressStatus.STALE, outcome
        outcome = await use_case(take(old, "cb-k2"))
        assert outcome.status is PressStatus.APPLIED, outcome  # was STALE
        events = await svc.admin.event_page(code, now.version, 50)
        assert [(e.kind, e.seat, e.text) for e in events][:1] == [("act", defender, "K")]
    finally:
        await svc.aclose()


async def test_a_pass_when_he_has_no_move_now_is_silent(table: Table) -> None:
    """#41: a thrower taps Pass while the bout ends (the last throw-in on a Take
    ends it at once) and the next asks nothing of him: no move is made and he
    is not told his button is out of date -- what he said holds (his keyboard
    is redrawn).  The same Pass when he has a move now stays stale."""
    t = table
    for _ in range(2000):
        table_, state, version = await t.svc.tables.get(t.code)
        assert state is not None
        assert not state.over, "no seat without a move came up"
        loaded = await t.svc.tables.load(t.code)
        idle = [
            s
            for s in range(state.players)
            if not state.legal_actions(s) and not loaded.moved_since(s, version - 1)
        ]
        if idle and version > 1:
            break
        await human_move(t.svc, t.code, random.Random(version))
    assert state is not None
    seat = idle[0]
    user = table_.seats[seat].user
    assert user is not None
    now = stamp(view(state, seat))
    n = BOUT_STAMP_LEN
    other_bout = ("B" * n if now.startswith("A" * n) else "A" * n) + now[n:]
    outcome = await t.press_button(pressing(t, user, version - 1, act("P"), other_bout))
    assert outcome.status is PressStatus.MOOT, outcome  # was STALE: a toast
    assert outcome.ok
    assert alert(outcome, Translator("en")) is None  # answered silently
    assert (user, HAND[user], Urgency.NOW) in t.delivery.edits  # redrawn
    assert (await t.svc.tables.load(t.code)).version == version  # no move
