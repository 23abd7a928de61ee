"""Arenas (#27): ``/arena`` in a group, the admin's set-up message, *Join* and
*Withdraw* on the arena's message, *Cancel* under the standings an admin asked
for (#38) -- carried out by
:class:`telegram_bot.usecases.arena.ArenaActions`, shown by
:class:`telegram_bot.publishing.arena_board.ArenaBoards`."""

from __future__ import annotations

from aiogram import Router
from aiogram.filters import Command
from aiogram.types import CallbackQuery, Message

from telegram_bot.buttons.callbacks import ArenaCb, ArenaOp, ArenaSetupCb
from telegram_bot.handlers.common import answer, player
from telegram_bot.publishing.arena_board import ArenaBoards
from telegram_bot.usecases.cases import UseCases
from telegram_bot.views import texts
from telegram_bot.views.arena import ONLY_ADMINS, Setup, cancel_markup, setup_screen
from telegram_bot.views.i18n import Translator

router = Router(name=__name__)


@router.message(Command("arena"))
async def arena_command(
    message: Message,
    cases: UseCases,
    arena_boards: ArenaBoards,
    locale: str,
    chat_locale: str,
    _: Translator,
) -> None:
    """The group's arena (its standings; an admin's with *Cancel*, #38), or
    the set-up for an admin.  #38: a member's standings of an arena on go to
    his private chat (or, for one the bot cannot write to there, to the group
    once a minute at low priority); its message in the group is brought up to
    date.  #41: his answer says when its standings were true and links to
    that message (in the group: a reply to it)."""
    if message.from_user is None:
        return
    chat = message.chat
    user = message.from_user.id
    outcome = await cases.arena.ask(chat.id, chat.type == "private", user)
    t = Translator(chat_locale)
    if outcome.arena is not None and outcome.admin and not outcome.arena.over:
        # an admin's own command: the standings with *Cancel*, in the group
        await message.answer(
            arena_boards.standings(outcome.arena, chat_locale),
            reply_markup=cancel_markup(outcome.arena, t),
        )
    elif outcome.arena is not None and not outcome.arena.over:
        await arena_boards.refresh(outcome.arena)
        at = await cases.arena.answer_at(chat.id, user, "arena")
        if at.chat is not None:
            lang = locale if at.chat == user else chat_locale
            await arena_boards.answer(outcome.arena, at.chat, lang, low=at.low)
    elif outcome.arena is not None:
        await message.answer(arena_boards.standings(outcome.arena, chat_locale))
    if outcome.setup:
        text, markup = setup_screen(Setup(), t)
        await message.answer(text, reply_markup=markup)
    elif outcome.notice is not None:
        await message.answer(t(outcome.notice))


@router.callback_query(ArenaSetupCb.filter())
async def arena_setup(
    callback: CallbackQuery,
    callback_data: ArenaSetupCb,
    cases: UseCases,
    arena_boards: ArenaBoards,
    locale: str,
    chat_locale: str,
    _: Translator,
) -> None:
    """A choice on the set-up message (it is redrawn), or *Announce*."""
    message = callback.message
    if not isinstance(message, Message) or message.chat.type == "private":
        await answer(callback, _(texts.BAD_BUTTON), show_alert=True)
        return
    chat = message.chat.id
    setup = Setup.of(callback_data)
    if not await cases.arena.may_set_up(chat, callback.from_user.id):
        await answer(callback, _(ONLY_ADMINS), show_alert=True)
        return
    if callback_data.op == "set":
        await answer(callback)
        text, markup = setup_screen(setup, Translator(chat_locale))
        await arena_boards.delivery.edit(chat, message.message_id, text, markup)
        return
    outcome = await cases.arena.announce(chat, player(callback.from_user, locale), setup)
    if outcome.error is not None:
        await answer(callback, texts.refusal(outcome.error, _, chat), show_alert=True)
        return
    if outcome.notice is not None:
        await answer(callback, _(outcome.notice), show_alert=True)
        return
    await answer(callback)
    assert outcome.arena is not None
    await arena_boards.post(outcome.arena, chat_locale, message.message_id)


@router.callback_query(ArenaCb.filter())
async def arena_button(
    callback: CallbackQuery,
    callback_data: ArenaCb,
    cases: UseCases,
    arena_boards: ArenaBoards,
    locale: str,
    _: Translator,
) -> None:
    """*Join*, *Withdraw* or an admin's *Cancel*: a short answer to him, the
    arena's message redrawn."""
    if callback_data.op == ArenaOp.CANCEL:
        await arena_cancel(callback, callback_data.arena, cases, arena_boards, _)
        return
    if callback_data.op == ArenaOp.JOIN:
        outcome = await cases.arena.join(callback_data.arena, player(callback.from_user, locale))
    else:
        outcome = await cases.arena.withdraw(callback_data.arena, callback.from_user.id)
    chat = callback.message.chat.id if callback.message is not None else None
    if outcome.error is not None:
        await answer(callback, texts.refusal(outcome.error, _, chat), show_alert=True)
    elif outcome.url is not None:  # #38: the private chat opens; its Start joins him
        await answer(callback, _(outcome.notice) if outcome.notice else None, url=outcome.url)
    else:
        await answer(callback, _(outcome.notice) if outcome.notice else None)
    if outcome.arena is not None:
        await arena_boards.refresh(outcome.arena)


async def arena_cancel(
    callback: CallbackQuery,
    arena_id: str,
    cases: UseCases,
    arena_boards: ArenaBoards,
    _: Translator,
) -> None:
    """*Cancel* (#38): the group's admins only; the others are told so."""
    message = callback.message
    if not isinstance(message, Message) or message.chat.type == "private":
        await answer(callback, _(texts.BAD_BUTTON), show_alert=True)
        return
    outcome = await cases.arena.cancel(arena_id, message.chat.id, callback.from_user.id)
    if outcome.error is not None:
        await answer(callback, texts.refusal(outcome.error, _, message.chat.id), show_alert=True)
        return
    await answer(callback, _(outcome.notice) if outcome.notice else None, show_alert=True)
    if outcome.arena is not None and outcome.arena.over:
        await arena_boards.refresh(outcome.arena)
        await arena_boards.cancelled(outcome.arena, message.message_id)
