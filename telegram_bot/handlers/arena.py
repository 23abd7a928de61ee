"""Arenas (#27): ``/arena`` in a group, the admin's set-up message, *Join* and
*Withdraw* on the arena's message, *Cancel* under the standings an admin asked
for (#38) -- carried out by
:class:`telegram_bot.usecases.arena.ArenaActions` (one call each), what changed
shown by the publisher (:class:`telegram_bot.publishing.arena_board.ArenaBoards`)."""

from __future__ import annotations

from aiogram import Router
from aiogram.filters import Command
from aiogram.types import CallbackQuery, Message

from telegram_bot.buttons.callbacks import ArenaCb, ArenaOp, ArenaSetupCb
from telegram_bot.handlers.common import answer, player, topic_of
from telegram_bot.publishing.changes import Shows
from telegram_bot.usecases.cases import UseCases
from telegram_bot.views import texts
from telegram_bot.views.arena import Setup, cancel_markup, setup_screen, standings_screen
from telegram_bot.views.i18n import Translator

router = Router(name=__name__)


@router.message(Command("arena"))
async def arena_command(
    message: Message,
    cases: UseCases,
    publisher: Shows,
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
    outcome = await cases.arena.ask(chat.id, chat.type == "private", user, locale, chat_locale)
    t = Translator(chat_locale)
    arena = outcome.arena
    if arena is not None and (arena.over or outcome.admin):
        # an admin's own command: the standings with *Cancel*, in the group
        text, _markup = standings_screen(arena, t, outcome.read_at)
        markup = cancel_markup(arena, t) if outcome.admin else None
        await message.answer(text, reply_markup=markup)
    if outcome.setup:
        text, setup_markup = setup_screen(Setup(), t)
        await message.answer(text, reply_markup=setup_markup)
    elif outcome.notice is not None:
        await message.answer(t(outcome.notice))
    await publisher.show(*outcome.changes)


@router.callback_query(ArenaSetupCb.filter())
async def arena_setup(
    callback: CallbackQuery,
    callback_data: ArenaSetupCb,
    cases: UseCases,
    publisher: Shows,
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
    outcome = await cases.arena.set_up(
        chat,
        message.message_id,
        player(callback.from_user, locale),
        Setup.of(callback_data),
        announce=callback_data.op != "set",
        lang=chat_locale,
        thread=topic_of(message),
    )
    if outcome.error is not None:
        await answer(callback, texts.refusal(outcome.error, _, chat), show_alert=True)
    elif outcome.notice is not None:
        await answer(callback, _(outcome.notice), show_alert=True)
    else:
        await answer(callback)
    await publisher.show(*outcome.changes)


@router.callback_query(ArenaCb.filter())
async def arena_button(
    callback: CallbackQuery,
    callback_data: ArenaCb,
    cases: UseCases,
    publisher: Shows,
    locale: str,
    _: Translator,
) -> None:
    """*Join*, *Withdraw* or an admin's *Cancel*: a short answer to him, the
    arena's message redrawn."""
    if callback_data.op == ArenaOp.CANCEL:
        await arena_cancel(callback, callback_data.arena, cases, publisher, _)
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
    await publisher.show(*outcome.changes)


async def arena_cancel(
    callback: CallbackQuery,
    arena_id: str,
    cases: UseCases,
    publisher: Shows,
    _: Translator,
) -> None:
    """*Cancel* (#38): the group's admins only; the others are told so."""
    message = callback.message
    if not isinstance(message, Message) or message.chat.type == "private":
        await answer(callback, _(texts.BAD_BUTTON), show_alert=True)
        return
    chat = message.chat.id
    outcome = await cases.arena.cancel(arena_id, chat, callback.from_user.id, message.message_id)
    if outcome.error is not None:
        await answer(callback, texts.refusal(outcome.error, _, chat), show_alert=True)
        return
    await answer(callback, _(outcome.notice) if outcome.notice else None, show_alert=True)
    await publisher.show(*outcome.changes)
