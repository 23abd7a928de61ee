"""Last line of defence: whatever a handler could not handle gets a short apology
(an alert for a button) and a log line; the polling loop never stops for it.
Redis unreachable: "the game is unavailable for a moment" (the apology's flood
tokens come from the in-process fallback, :mod:`telegram_bot.delivery.flood.fallback`).
The catch-all callback handler answers buttons nobody recognised (forged data)."""

from __future__ import annotations

import logging
import traceback

from aiogram import Router
from aiogram.types import CallbackQuery, ErrorEvent

from tables.model import ServiceUnavailable
from telegram_bot.handlers.common import ANSWERED
from telegram_bot.views import texts
from telegram_bot.views.i18n import Translator, pick_language

log = logging.getLogger(__name__)
router = Router(name=__name__)


def _where(exc: BaseException) -> str:
    """The innermost calls of the project's own code that met ``exc``, for a
    one-line log of an expected fault (which key's master was down)."""
    frames = [
        f"{frame.name}"
        for frame in traceback.extract_tb(exc.__traceback__)
        if "/site-packages/" not in frame.filename and "/lib/python" not in frame.filename
    ]
    return " < ".join(reversed(frames[-3:])) or "?"


@router.errors()
async def on_error(event: ErrorEvent) -> bool:
    exc = event.exception
    apology = texts.SORRY
    if isinstance(exc, ServiceUnavailable | ConnectionError | TimeoutError):
        log.warning("storage unavailable (in %s): %s", _where(exc), exc)
        apology = texts.UNAVAILABLE  # Redis is down: the answer still goes out
    else:
        log.exception("handler failed", exc_info=exc)
    update = event.update
    try:
        if update.callback_query is not None and ANSWERED in getattr(exc, "__notes__", ()):
            pass  # answered silently while it waited: Telegram refuses a second answer
        elif update.callback_query is not None:
            q = update.callback_query
            _ = Translator(pick_language(q.from_user.language_code))
            await q.answer(_(apology), show_alert=True)
        elif update.message is not None:
            m = update.message
            _ = Translator(pick_language(m.from_user.language_code if m.from_user else None))
            await m.answer(_(apology))
        elif update.inline_query is not None:
            await update.inline_query.answer([], cache_time=0)
    except Exception:  # the apology itself failed: nothing more to do
        log.debug("could not apologise", exc_info=True)
    return True


fallback = Router(name=__name__ + ".fallback")


@fallback.callback_query()
async def unknown_button(callback: CallbackQuery, _: Translator) -> None:
    await callback.answer(_(texts.BAD_BUTTON), show_alert=True)
