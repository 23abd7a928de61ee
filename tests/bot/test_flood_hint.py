"""The flood hint's parts (#24 item 6): the line and *Private chat* in a hand in
the group (pure, every language), its once-per-game claim shared by every bot
process (real Redis), and where the chat state keeps who carries it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

import engine
from sandbox.fake_api.text import parse_text
from tables import OVER, PLAYING, LiveConfig, Loaded, Seat, Table, TableService
from telegram_bot.buttons.moves import Selection
from telegram_bot.state.chat_state import ChatStateStore, TableUi
from telegram_bot.state.hints import HintClaims
from telegram_bot.state.snapshot import Snapshot
from telegram_bot.views import texts
from telegram_bot.views.hand import FLOOD_MARK, hand_screen
from telegram_bot.views.i18n import LANGUAGES, Translator

LINK = "https://t.me/durak_bot?start=Hint_-12345"
TID = "Hint_-12345"


def snap(status: str = PLAYING, *, ai_plays_me: bool = False) -> Snapshot:
    seats = (
        Seat(user=1, name="Ann", ai="heuristic" if ai_plays_me else None),
        Seat(user=2, name="Bob"),
    )
    table = Table(
        id=TID, chat=-100_24, creator=1, variant="chuvash", options={}, max_seats=4,
        timer=0, seats=seats, status=status, game_no=1, seed=24,
    )  # fmt: skip
    state = engine.new_game("chuvash", 2, 24)
    if status == OVER:
        while not state.over:
            state.apply(state.legal_actions(state.to_act()[0])[0])
    loaded = Loaded(version=4, table=table, state=state, deadline=None, result=None)
    return Snapshot(loaded, TableUi(hands={1: -1, 2: -2}, group_lang="en"))


def urls(markup: object) -> list[tuple[str, str]]:
    rows = getattr(markup, "inline_keyboard", None) or []
    return [(b.text, b.url) for row in rows for b in row if b.url]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_hinted_hand_says_so_and_offers_the_private_chat(lang: str) -> None:
    _ = Translator(lang)
    plain, _e = parse_text(hand_screen(snap(), 0, lang, Selection())[0], "HTML")
    hinted, markup = hand_screen(snap(), 0, lang, Selection(), private_link=LINK)
    hinted_plain, _e = parse_text(hinted, "HTML")
    line = f"{FLOOD_MARK} {_(texts.FLOOD_HINT)}"
    assert line not in plain
    assert hinted_plain.endswith("\n\n" + line)  # the last line, under whose move it is
    assert hinted_plain.startswith(plain)  # the rest as it was
    assert urls(markup) == [("🔒 " + _("Private chat"), LINK)]  # the hand's last row
    assert markup is not None
    assert [b.url for b in markup.inline_keyboard[-1]] == [LINK]
    if lang != "en":
        assert _(texts.FLOOD_HINT) != texts.FLOOD_HINT


def test_no_hint_while_the_ai_plays_or_once_over() -> None:
    for s in (snap(ai_plays_me=True), snap(OVER)):
        text, markup = hand_screen(s, 0, "en", Selection(), private_link=LINK)
        assert FLOOD_MARK not in text
        assert not [u for u in urls(markup) if u[1] == LINK]


@pytest.fixture
async def services(redis_url: str, redis_prefix: str) -> AsyncIterator[list[TableService]]:
    """Two bot processes' connections to one Redis."""
    found = [TableService.from_url(redis_url, LiveConfig(prefix=redis_prefix)) for _ in range(2)]
    yield found
    for svc in found:
        await svc.aclose()


async def test_the_hint_is_claimed_once_per_game_across_processes(
    services: list[TableService],
) -> None:
    one, two = (HintClaims.of(svc) for svc in services)
    assert await one.flood(TID, 1, 7)
    assert not await two.flood(TID, 1, 7)  # the other process: given already
    assert not await one.flood(TID, 1, 7)
    assert await two.flood(TID, 1, 8)  # another player
    assert await two.flood(TID, 2, 7)  # the next game (a rematch)
    key = one.keys.flood(TID, 1, 7)
    assert 0 < await services[0].kv.pttl(key) <= services[0].config.game_ttl * 1000


async def test_the_chat_state_keeps_the_hinted_players_for_one_game(
    services: list[TableService],
) -> None:
    ui = ChatStateStore.of(services[0])
    await ui.update_table(TID, hands={7: -3}, flood_hints={7: 1})
    got = await ui.table(TID)
    assert got.flood_hints == {7: 1}
    assert got.hands == {7: -3}
    await ui.update_table(TID, new_game=True)  # a rematch: nobody carries it
    assert (await ui.table(TID)).flood_hints == {}
    await ui.forget_table(TID)
