"""What a rematch offer shows (#38): the result -- on the group's table message
and in each hand -- names who agreed, whom it waits for and when it ends (a
date_time entity); *Rematch* carries the game it was drawn for; the refusals
of a stranger's and a stale press have words of their own, in every language."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tables import LiveError, RematchOffer
from telegram_bot.buttons.callbacks import LobbyCb, LobbyOp, parse_lobby
from telegram_bot.buttons.moves import Selection
from telegram_bot.views.hand import hand_screen
from telegram_bot.views.i18n import LANGUAGES, Translator
from telegram_bot.views.table import table_screen
from telegram_bot.views.texts import refusal
from tests.bot.test_render_arena import game_over

UNTIL = 1_700_000_060_000


def test_the_result_shows_the_rematch_offer() -> None:
    snap = game_over("")
    text, _markup = table_screen(snap, "bot")
    assert "agreed" not in text  # no offer, no lines
    table = replace(snap.table, rematch=RematchOffer(UNTIL, (1,)))
    snap = replace(snap, loaded=replace(snap.loaded, table=table))
    for text, markup in (table_screen(snap, "bot"), hand_screen(snap, 1, "en", Selection())):
        assert "<b>Rematch</b> · agreed: Ann" in text
        assert "Waiting for Bob" in text
        assert f'<tg-time unix="{UNTIL // 1000}" format="r">' in text
        assert "not rated" in text
        datas = [b.callback_data for row in getattr(markup, "inline_keyboard", []) for b in row]
        rematch = [cb for d in datas if (cb := parse_lobby(d)) is not None]
        assert [(cb.op, cb.game) for cb in rematch] == [(LobbyOp.REMATCH, 1)]


def test_a_rematch_button_of_before_the_offer_still_parses() -> None:
    """A *Rematch* drawn before it carried its game: no game, a fresh press."""
    old = parse_lobby("l:Abc_-123456:re:")
    assert old is not None
    assert (old.op, old.game) == (LobbyOp.REMATCH, None)
    assert LobbyCb(code="Abc_-123456", op=LobbyOp.REMATCH, arg="3").game == 3
    assert parse_lobby("l:Abc_-123456:re:x3") is None


@pytest.mark.parametrize("locale", LANGUAGES)
def test_a_strangers_and_a_stale_rematch_press_are_told_why(locale: str) -> None:
    _ = Translator(locale)
    stale = refusal(LiveError("not_allowed", "x", action="rematch_stale"), _)
    stranger = refusal(LiveError("not_seated", "x", action="rematch"), _)
    early = refusal(LiveError("not_allowed", "x", action="rematch"), _)
    seated = refusal(LiveError("not_seated", "x"), _)
    assert len({stale, stranger, early, seated}) == 4


@pytest.mark.parametrize("locale", LANGUAGES)
def test_a_button_of_an_ended_game_says_what_now(locale: str) -> None:
    """#41: a stale button after the game: over, with the way on -- a rematch or a
    new game; an arena's game has no rematch, its arena seats him again."""
    _ = Translator(locale)
    over = refusal(LiveError("game_over", "x", arena=False), _)
    arena = refusal(LiveError("game_over", "x", arena=True), _)
    assert all(way in over for way in ("🔁", "/new", "/play"))
    assert not any(way in arena for way in ("🔁", "/new"))
    assert over != arena != refusal(LiveError("not_seated", "x"), _)
