"""What each message of a table shows, from a :class:`Snapshot` of it (pure: no
I/O).  The publisher decides which messages to edit and how urgently; these
functions only turn the table into text and keyboard, through
:mod:`telegram_bot.views.board` and :mod:`telegram_bot.views.lobby`."""

from __future__ import annotations

from datetime import UTC, datetime

from aiogram.types import InlineKeyboardMarkup

from engine import public_view, view
from tables import CANCELLED, OVER, Table
from telegram_bot.buttons.moves import Selection
from telegram_bot.state.snapshot import Snapshot, group_of
from telegram_bot.views import texts
from telegram_bot.views.board import render_game_over, render_hand, render_table
from telegram_bot.views.cards import CARDS_HELD
from telegram_bot.views.fair import commitment_lines, seed_lines, with_replay, with_watch
from telegram_bot.views.format import ai_name, user_text
from telegram_bot.views.i18n import VARIANT_TITLES, Translator
from telegram_bot.views.keyboards import cards_row, take_back_keyboard
from telegram_bot.views.lobby import level_suffix, render_lobby

Screen = tuple[str, InlineKeyboardMarkup | None]
"""A message's text and keyboard."""


def seat_names(table: Table, lang: str) -> list[str]:
    """Names by seat in ``lang`` (AI seats' names in its words, with their level:
    «Компьютер 1 (сложный)»); a human seat the AI plays now is marked 🤖."""
    _ = Translator(lang)
    return [
        (s.name if s.human else ai_name(s.name, _) + level_suffix(s, _))
        + (" 🤖" if s.ai_controlled and s.human else "")
        if s.name
        else ""
        for s in table.seats
    ]


def ai_seats(table: Table) -> list[int]:
    """The human seats the AI plays now (timeouts, left, blocked the bot, operator)."""
    return [i for i, s in enumerate(table.seats) if s.human and s.ai_controlled]


def lobby_lang(snap: Snapshot, chat: int) -> str:
    """The language of the table's lobby message in ``chat``."""
    if chat < 0:
        return snap.ui.group_lang or "en"
    return snap.ui.langs.get(chat, "en")


def deadline(snap: Snapshot) -> datetime | None:
    d = snap.loaded.deadline
    return datetime.fromtimestamp(d / 1000, UTC) if d else None


def hand_screen(snap: Snapshot, seat: int, lang: str, selection: Selection) -> Screen:
    """A seat's hand message: his view, his selection; the result once over; the
    take-back button while the AI plays for him."""
    t, state = snap.table, snap.loaded.state
    assert state is not None
    names = seat_names(t, lang)
    if t.status == OVER or state.over:
        return game_over_screen(snap, view(state, seat), lang)
    text, markup = render_hand(
        view(state, seat),
        locale=lang,
        names=names,
        game_id=t.id,
        version=snap.version,
        selection=selection,
        deadline=deadline(snap),
        ai_seats=ai_seats(t),
    )
    if group_of(t) is None:  # a private game: no table message shows the commitment
        text += "\n\n" + commitment_lines(t, Translator(lang))
    if t.seats[seat].ai_controlled:
        _ = Translator(lang)
        return _(texts.AI_PLAYS) + "\n\n" + text, take_back_keyboard(t.id, _(texts.TAKE_BACK))
    return text, markup


def table_screen(snap: Snapshot, bot_username: str) -> Screen:
    """The group's table message: the public view (the result once over)."""
    t, state = snap.table, snap.loaded.state
    assert state is not None
    lang = snap.ui.group_lang or "en"
    pv = public_view(state)
    if t.status == OVER or state.over:
        return game_over_screen(snap, pv, lang)
    text, markup = render_table(
        pv,
        locale=lang,
        names=seat_names(t, lang),
        deadline=deadline(snap),
        bot_username=bot_username,
        ai_seats=ai_seats(t),
        code=t.id,
    )
    _ = Translator(lang)
    return text + "\n\n" + commitment_lines(t, _), with_watch(markup, t, _)


def watch_screen(snap: Snapshot, lang: str) -> Screen:
    """A spectator's private message (issue #16): the public view, as the group's
    table message shows it -- never a hand; the result and *Replay* once over."""
    t, state = snap.table, snap.loaded.state
    assert state is not None
    pv = public_view(state)
    _ = Translator(lang)
    if t.status == OVER or state.over:
        text, _markup = render_game_over(pv, locale=lang, names=seat_names(t, lang))
        markup = with_replay(None, t, _) if snap.loaded.result is not None else None
        return text + "\n\n" + seed_lines(t, _), markup
    text, _none = render_table(
        pv, locale=lang, names=seat_names(t, lang), deadline=deadline(snap), ai_seats=ai_seats(t)
    )
    return "👀 " + text + "\n\n" + commitment_lines(t, _), None


def game_over_screen(snap: Snapshot, v: dict[str, object], lang: str) -> Screen:
    """The result, the deal's seed revealed, *Rematch* and *Replay* (issue #16)."""
    t = snap.table
    text, markup = render_game_over(v, locale=lang, names=seat_names(t, lang), code=t.id)
    _ = Translator(lang)
    if snap.loaded.result is None:  # ended by an operator: no record to replay
        return text + "\n\n" + seed_lines(t, _), markup
    return text + "\n\n" + seed_lines(t, _), with_replay(markup, t, _)


def lobby_screen(snap: Snapshot, chat: int, bot_username: str) -> Screen:
    """The lobby message in ``chat`` (or that the lobby was cancelled)."""
    lang = lobby_lang(snap, chat)
    if snap.table.status == CANCELLED:
        return Translator(lang)(texts.LOBBY_CANCELLED), None
    return render_lobby(snap.table, locale=lang, bot_username=bot_username)


def started_lobby_screen(snap: Snapshot, chat: int, bot_username: str) -> Screen:
    """The lobby message in ``chat`` once its game started (in a group: *My
    cards* and *In private*, as on the table message)."""
    t = snap.table
    _ = Translator(lobby_lang(snap, chat))
    head = f"<b>{_(VARIANT_TITLES[t.variant])}</b> · " + ", ".join(
        user_text(s.name if s.human else ai_name(s.name, _) + level_suffix(s, _)) for s in t.seats
    )
    if chat < 0:  # the same buttons as the table message's (issue 14)
        row = cards_row(
            t.id, bot_username, CARDS_HELD + " " + _("My cards"), "🔒 " + _("In private")
        )
        return head + "\n" + _(texts.GAME_STARTED), InlineKeyboardMarkup(inline_keyboard=[row])
    return head + "\n" + _(texts.GAME_STARTED_PRIVATE), None
