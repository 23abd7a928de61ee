"""How a press is answered (issue 13): a modal alert only for a refusal; a short
notice (toast) for a stale or impossible press, with its reason formatted."""

from __future__ import annotations

from tables import LiveError
from telegram_bot.buttons.moves import ERR_DEFENDER_LIMIT, ERR_THROW_LIMIT
from telegram_bot.handlers.game import NOTICES, alert
from telegram_bot.usecases.press import PressOutcome, PressStatus
from telegram_bot.views.i18n import Translator, help_text


def test_one_card_too_many_is_a_toast_that_says_why() -> None:
    _ = Translator("ru")
    too_many = PressOutcome(PressStatus.ILLEGAL, reason=ERR_DEFENDER_LIMIT, reason_args={"n": 3})
    # #29: «отбивающийся», as everywhere else; «побьёт»
    assert alert(too_many, _) == "Отбивающийся побьёт не больше 3 — столько у него карт."
    throw = PressOutcome(PressStatus.ILLEGAL, reason=ERR_THROW_LIMIT, reason_args={"n": 2})
    assert alert(throw, Translator("en")) == "At most 2 cards can be thrown in now."
    assert PressStatus.ILLEGAL in NOTICES


def test_stale_is_a_toast_a_double_tap_silent_a_refusal_modal() -> None:
    _ = Translator("en")
    assert PressStatus.STALE in NOTICES
    assert "out of date" in (alert(PressOutcome(PressStatus.STALE), _) or "")
    assert alert(PressOutcome(PressStatus.REPEATED), _) is None  # silent
    refused = PressOutcome(PressStatus.REFUSED, error=LiveError("not_allowed", "no"))
    assert alert(refused, _)
    assert PressStatus.REFUSED not in NOTICES  # a refusal stays a modal alert


def test_help_says_how_a_chuvash_lead_is_made() -> None:
    # tap, then Play -- and a card that can only be led alone goes at once (#24)
    assert "can only be led alone is played at once" in help_text("en")
    assert "только поодиночке, сразу идёт на стол" in help_text("ru")
    assert "лише поодинці, одразу йде на стіл" in help_text("uk")
    assert "⏭" in help_text("ru")
