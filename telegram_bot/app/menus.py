"""What the bot sets on Telegram once at start-up: the command menu per
language and scope, and the private chats' menu button that opens the Mini
App (#42)."""

from __future__ import annotations

import logging

from aiogram import Bot
from aiogram.exceptions import TelegramAPIError
from aiogram.types import (
    BotCommandScopeAllGroupChats,
    BotCommandScopeAllPrivateChats,
    BotCommandScopeDefault,
)

from telegram_bot.views.i18n import (
    GROUP_COMMANDS,
    LANGUAGES,
    PRIVATE_COMMANDS,
    Translator,
    bot_commands,
)
from telegram_bot.views.miniapp import MiniApp, menu_button

log = logging.getLogger(__name__)


async def set_commands(bot: Bot) -> None:
    """The command menu per language and scope (private chats, groups)."""
    for lang in (*LANGUAGES, None):
        private = bot_commands(lang or "en", PRIVATE_COMMANDS)
        group = bot_commands(lang or "en", GROUP_COMMANDS)
        for scope, cmds in (
            (BotCommandScopeAllPrivateChats(), private),
            (BotCommandScopeAllGroupChats(), group),
        ):
            await bot.set_my_commands(cmds, scope=scope, language_code=lang)
        if lang is None:
            await bot.set_my_commands(private, scope=BotCommandScopeDefault())


async def set_menu_button(bot: Bot, app: MiniApp) -> None:
    """The private chats' menu button opens the Mini App without a table:
    the user's lobbies and games (#42).  Set once, as every private chat's
    default; a failure is logged (the buttons in the messages still open it)."""
    # one default for all, in English: Telegram takes no language here (a
    # chat whose user speaks another gets its own, Publisher: AppMenuSet)
    button = menu_button(app, Translator("en"))
    try:
        await bot.set_chat_menu_button(menu_button=button)
    except TelegramAPIError as e:
        log.warning("the Mini App's menu button was not set: %s", e.message)
