"""/start (welcome), ``/start <code>`` (a deep link: join that lobby),
``/start app_<code>`` (the Mini App's button of that table, #42), /help."""

from __future__ import annotations

from aiogram import F, Router
from aiogram.filters import Command, CommandObject, CommandStart
from aiogram.types import Message

from telegram_bot.buttons.callbacks import CODE_PATTERN, MAX_CODE
from telegram_bot.handlers.common import open_lobby_at, player, reply, solo_link
from telegram_bot.publishing.changes import AppMenuSet, Shows
from telegram_bot.settings import Settings
from telegram_bot.usecases.arena import ARENA_LINK
from telegram_bot.usecases.cases import UseCases
from telegram_bot.views import texts
from telegram_bot.views.i18n import LEVEL_TITLES, VARIANT_TITLES, Translator, help_text
from telegram_bot.views.keyboards import url_keyboard
from telegram_bot.views.miniapp import APP_LINK, MiniApp, open_table_screen

router = Router(name=__name__)


SOLO_LINKS = {solo_link(v, level): (v, level) for v in VARIANT_TITLES for level in LEVEL_TITLES}
"""``t.me/<bot>?start=play_<game>[_<level>]``: the group's answer to /play links
here (the level of ``/play shchelkovsky hard`` too)."""


@router.message(
    CommandStart(deep_link=True, magic=F.args.in_(SOLO_LINKS)), F.chat.type == "private"
)
async def start_solo(
    message: Message,
    command: CommandObject,
    cases: UseCases,
    settings: Settings,
    locale: str,
    _: Translator,
    publisher: Shows,
) -> None:
    """The *Play against the AI* button under a group's /play: a solo game now."""
    assert message.from_user is not None
    assert command.args
    variant, level = SOLO_LINKS[command.args]
    outcome = await cases.lobby.play_solo(
        player(message.from_user, locale),
        variant=variant,
        timer=settings.default_timer,
        opponents=settings.solo_opponents,
        level=level,
    )
    await reply(message, outcome, _, publisher)


@router.message(CommandStart(deep_link=True, magic=F.args == "new"), F.chat.type != "private")
async def start_in_group(
    message: Message,
    cases: UseCases,
    settings: Settings,
    locale: str,
    chat_locale: str,
    _: Translator,
    publisher: Shows,
) -> None:
    """``/start new`` in a group: *Add me to a group* (``?startgroup=new``) sends it
    right after the bot joined, which already greeted the group (issue 13: the
    greeting came twice) -- so it opens the lobby the link was for instead."""
    assert message.from_user is not None
    deps = (cases.lobby, settings)
    outcome = await open_lobby_at(message, message.from_user, "chuvash", deps, locale, chat_locale)
    await reply(message, outcome, _, publisher)


@router.message(
    CommandStart(deep_link=True, magic=F.args.regexp(rf"^{ARENA_LINK}[A-Za-z0-9_-]{{1,64}}$")),
    F.chat.type == "private",
)
async def start_in_arena(
    message: Message,
    command: CommandObject,
    cases: UseCases,
    publisher: Shows,
    locale: str,
    _: Translator,
) -> None:
    """``t.me/<bot>?start=arena_<id>`` (#38): the answer to *Join* of a member
    who never started the bot -- his Start joins him (the arena's cards come
    here), the arena's message shows him."""
    user = message.from_user
    assert user is not None
    assert command.args
    arena_id = command.args[len(ARENA_LINK) :]
    outcome = await cases.arena.join(arena_id, player(user, locale), link=True)
    if outcome.error is not None:
        await message.answer(texts.refusal(outcome.error, _))
    elif outcome.notice is not None:
        await message.answer(_(outcome.notice))
    await publisher.show(*outcome.changes)


@router.message(
    CommandStart(
        deep_link=True, magic=F.args.regexp(rf"^{APP_LINK}[A-Za-z0-9_-]{{1,{MAX_CODE}}}$")
    ),
    F.chat.type == "private",
)
async def start_in_app(
    message: Message,
    command: CommandObject,
    miniapp: MiniApp | None,
    locale: str,
    chat_locale: str,
    bot_username: str,
    _: Translator,
    publisher: Shows,
) -> None:
    """``t.me/<bot>?start=app_<table id>`` (#42): a group's *Open the table*
    when the Mini App has no short name -- the answer carries the ``web_app``
    button of that table (a group refuses one).  The Mini App off: the welcome."""
    assert command.args
    if miniapp is None:
        await start(message, _, locale, chat_locale, bot_username, publisher)
        return
    text, markup = open_table_screen(miniapp, command.args[len(APP_LINK) :], _)
    await message.answer(text, reply_markup=markup)
    await publisher.show(AppMenuSet(message.chat.id, locale))


@router.message(
    CommandStart(deep_link=True, magic=F.args.regexp(CODE_PATTERN)), F.chat.type == "private"
)
async def start_with_code(
    message: Message,
    command: CommandObject,
    cases: UseCases,
    locale: str,
    _: Translator,
    publisher: Shows,
) -> None:
    """Someone opened ``t.me/<bot>?start=<code>``: seat him at that lobby."""
    user = message.from_user
    assert user is not None
    assert command.args
    outcome = await cases.lobby.join_by_link(command.args, player(user, locale))
    await reply(message, outcome, _, publisher)


@router.message(CommandStart())
async def start(
    message: Message,
    _: Translator,
    locale: str,
    chat_locale: str,
    bot_username: str,
    publisher: Shows,
) -> None:
    if message.chat.type != "private":  # in a group: the group's language
        await message.answer(Translator(chat_locale)(texts.GREETING))
        return
    link = f"https://t.me/{bot_username}?startgroup=new"
    await message.answer(
        _(texts.WELCOME) + "\n\n" + help_text(locale),
        reply_markup=url_keyboard("➕ " + _(texts.ADD_TO_GROUP), link),
    )
    # #42: his chat's menu button (the Mini App) in his language
    await publisher.show(AppMenuSet(message.chat.id, locale))


@router.message(Command("help"))
async def help_command(message: Message, chat_locale: str) -> None:
    """In a group the group's language (/lang there), else the user's."""
    await message.answer(help_text(chat_locale, group=message.chat.type != "private"))
