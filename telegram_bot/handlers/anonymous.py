"""Commands sent on behalf of a chat -- an anonymous group admin (``from`` is
Telegram's placeholder user, ``sender_chat`` the group) or a channel: the
placeholder is the same user in every group, so a lobby it opened could be
started by nobody, and it would sit at one table across all of them (review2).
Such a command that acts as a person is answered "write as yourself"; /lang
(an anonymous admin sets the group's language), /help, /rules, /top and
/start go on to their handlers, and a command to another bot is left alone."""

from __future__ import annotations

from aiogram import Bot, F, Router
from aiogram.types import Message

from telegram_bot.views import texts
from telegram_bot.views.i18n import Translator

router = Router(name=__name__)

AS_THE_CHAT = frozenset({"lang", "help", "rules", "top", "start"})
"""The commands a chat may send as itself: none seats, or speaks for, a person."""


async def _ours_as_a_person(message: Message, bot: Bot) -> bool:
    """A command to this bot (``/cmd`` or ``/cmd@thisbot``) not in AS_THE_CHAT."""
    word = (message.text or "").split(maxsplit=1)[0][1:]
    name, _at, mention = word.partition("@")
    if name.lower() in AS_THE_CHAT:
        return False
    return not mention or mention.lower() == ((await bot.me()).username or "").lower()


@router.message(F.sender_chat, F.text.startswith("/"), _ours_as_a_person)
async def as_a_chat(message: Message, chat_locale: str) -> None:
    await message.reply(Translator(chat_locale)(texts.WRITE_AS_YOURSELF))
