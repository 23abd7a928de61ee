"""The e2e kit's hidden-card check: /help's example buttons are not a leak, a
card really shown is (CI once failed on the welcome text's ``↪ 9♦``)."""

from __future__ import annotations

from typing import Any

import pytest

from telegram_bot.views.i18n import LANGUAGES, help_text
from tests.bot.e2e_kit import _check_entry


def _entry(text: str) -> dict[str, Any]:
    return {"text": text, "reply_markup": None}


@pytest.mark.parametrize("locale", LANGUAGES)
@pytest.mark.parametrize("group", [False, True])
def test_help_examples_are_not_a_leak(locale: str, group: bool) -> None:
    assert _check_entry(_entry(help_text(locale, group=group)), 1, set(), ()) == 1


def test_a_card_beside_the_help_still_is() -> None:
    text = help_text("en") + "\nYour hand: 9♦"
    with pytest.raises(AssertionError, match="9D"):
        _check_entry(_entry(text), 1, set(), ())
    assert _check_entry(_entry(text), 1, {"9D"}, ()) == 1
