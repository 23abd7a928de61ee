"""How a press is answered (issue 13): a modal alert only for a refusal; a short
notice (toast) for a stale or impossible press, with its reason formatted."""

from __future__ import annotations

import asyncio
import contextlib
from types import SimpleNamespace
from typing import cast

import pytest
from aiogram.types import CallbackQuery, ErrorEvent

from tables import LiveError, ServiceUnavailable
from telegram_bot.buttons.moves import ERR_DEFENDER_LIMIT, ERR_THROW_LIMIT
from telegram_bot.handlers.common import ANSWER_PATIENCE, answered_in_time
from telegram_bot.handlers.errors import on_error
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


class _Press:
    """A callback query's answer side: what was answered, and when."""

    def __init__(self) -> None:
        self.id = "q1"
        self.answers: list[tuple[str | None, bool]] = []  # (text, work done by then)
        self.work_done = False
        self.from_user = SimpleNamespace(language_code="en")

    async def answer(self, text: str | None = None, **_options: object) -> bool:
        self.answers.append((text, self.work_done))
        return True


async def test_a_slow_move_is_answered_before_telegrams_window_closes() -> None:
    """A move the AI answers in the same write waits for the AI's decisions; on a
    loaded machine that took over a minute (a hog run, #37) while Telegram drops
    an answer after about 15 s.  Past its patience the press is answered
    silently, and its outcome still comes back; a quick one is left to its
    handler, which says what it says."""
    assert ANSWER_PATIENCE <= 5  # well inside Telegram's window
    slow = _Press()

    async def ai_thinks() -> str:
        await asyncio.sleep(0.3)
        slow.work_done = True
        return "applied"

    got = await answered_in_time(cast(CallbackQuery, slow), ai_thinks(), patience=0.05)
    assert got == ("applied", True)
    assert slow.answers == [(None, False)]  # silently, while the AI still thought

    quick = _Press()

    async def refused() -> str:
        return "stale"

    assert await answered_in_time(cast(CallbackQuery, quick), refused(), 0.05) == ("stale", False)
    assert quick.answers == []  # its handler answers, with the refusal's text

    cancelled = _Press()
    work = asyncio.ensure_future(asyncio.sleep(10))
    waiting = asyncio.ensure_future(answered_in_time(cast(CallbackQuery, cancelled), work, 5))
    await asyncio.sleep(0.01)
    waiting.cancel()  # the update is cancelled (a shutdown): so is its work
    with contextlib.suppress(asyncio.CancelledError):
        await waiting
    await asyncio.sleep(0)
    assert work.cancelled()


async def test_a_press_that_fails_after_its_silent_answer_is_not_answered_again() -> None:
    """A press that waited past its patience -- for a cluster's failover that
    did not come in time (#40) -- and then failed was answered silently
    already: the error handler sends no apology Telegram would refuse (it
    answered a second time, a wasted call)."""
    slow = _Press()

    async def waits_then_fails() -> str:
        await asyncio.sleep(0.3)
        slow.work_done = True
        raise ServiceUnavailable("Redis is unavailable: no answer from 127.0.0.1:7000")

    with pytest.raises(ServiceUnavailable) as failed:
        await answered_in_time(cast(CallbackQuery, slow), waits_then_fails(), patience=0.05)
    update = SimpleNamespace(callback_query=slow, message=None, inline_query=None)
    assert await on_error(cast(ErrorEvent, SimpleNamespace(exception=failed.value, update=update)))
    assert slow.answers == [(None, False)]  # once, silently, while it waited
