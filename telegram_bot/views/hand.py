"""What a player's hand message shows: his view of the table, his cards as buttons (his selection toggled), the moves he may make, and the result once over."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from datetime import datetime

from aiogram.types import DisabledButton, InlineKeyboardButton, InlineKeyboardMarkup

from engine import view
from engine.cards import card_names, parse_card_run
from tables.model import OVER
from telegram_bot.buttons import moves
from telegram_bot.buttons.callbacks import (
    BACK,
    BOUT_PASS,
    CLEAR,
    INERT,
    PLAY,
    GameCb,
    Press,
    act,
    page,
    press_card,
)
from telegram_bot.buttons.moves import Selection, View
from telegram_bot.state.snapshot_value import Snapshot, group_of
from telegram_bot.views import texts
from telegram_bot.views.board import (
    HISTORY,
    TICKET,
    TRANSFER,
    ai_seats,
    deadline,
    deadline_lines,
    fit_text,
    header_lines,
    player_lines,
    rating_labels,
    seat_names,
    status_lines,
    table_lines,
    warned_seats,
)
from telegram_bot.views.cards import card_label, glyph, group_hand
from telegram_bot.views.fair import commitment_shown
from telegram_bot.views.format import history_lines
from telegram_bot.views.i18n import Translator
from telegram_bot.views.keyboards import (
    PRIVATE_MARK,
    Screen,
    fit_rows,
    label_width,
    row_budget,
    take_back_keyboard,
)
from telegram_bot.views.miniapp import MiniApp, with_app_button
from telegram_bot.views.table import game_over_screen

MAX_ROW = 8


MAX_BUTTONS = 100


CARDS_PER_ROW = 6


PAGE_SIZE = 24
"""Distinct cards per page of a hand: four rows of six."""


MAX_CHOICES = 20


PLAYABLE = "•"


TOGGLED = "✓"


BOUT_PASS_MARK = "⏭"
"""The mark of "pass for the rest of this bout"."""


FLOOD_MARK = "🐢"
"""The mark of the line saying the group's flood limit slows his cards (#24)."""


# ------------------------------------------------------------------ hand message
def render_hand(
    view: View,
    *,
    locale: str,
    names: Sequence[str],
    game_id: str,
    version: int,
    selection: moves.Selection | None = None,
    deadline: datetime | None = None,
    history: int = HISTORY,
    ai_seats: Collection[int] = (),
    notes: Sequence[str] = (),
    warned: Collection[int] = (),
    ratings: Sequence[str] = (),
) -> tuple[str, InlineKeyboardMarkup]:
    """The private hand message of ``view["seat"]``: the table, trump, stock, every
    seat's count and role (``ai_seats``: human seats the AI plays now), the last
    moves, the timer, whose move it is (then ``notes``, a line each); keyboard:
    his cards (playable ones marked, toggled ones ticked) and the actions legal
    now."""
    _ = Translator(locale)
    me = view["seat"]
    sel = moves.clean(view, selection or moves.Selection())
    head = (
        header_lines(view, _)
        + table_lines(view, names, _)
        + player_lines(view, names, _, me, ai_seats, warned, ratings)
    )
    tail = deadline_lines(deadline, _) + status_lines(view, names, _, me)
    # #41: his own timeout warning is not repeated here -- the new message that
    # told him at once (Publisher.nudge, a notification) says it; ``warned``
    # names the others whose time ran out (player_lines)
    tail += [line for note in notes for line in ("", note)]
    text = fit_text(head, history_lines(view, names, _, history), tail, _)
    return text, hand_keyboard(view, _, game_id, version, sel)


def hand_keyboard(
    view: View, _: Translator, game_id: str, version: int, sel: moves.Selection
) -> InlineKeyboardMarkup:
    lg = moves.legal(view)
    playable = moves.playable(view, lg)
    stamp = moves.stamp(view)

    def button(text: str, press: Press, style: str | None = None) -> InlineKeyboardButton:
        return InlineKeyboardButton(
            text=text,
            callback_data=GameCb.of(game_id, version, press, stamp, sel.token).pack(),
            style=style,
        )

    rows: list[list[InlineKeyboardButton]] = []
    if sel.choose:  # the moves of one card, when a tap was ambiguous
        choices = [
            button(_choice_label(m, _), act(m)) for m in moves.card_moves(view, sel.choose, lg)
        ]
        choices = choices[:MAX_CHOICES]
        rows += fit_rows(choices, 4)
        rows.append([button("✖ " + _("Back"), BACK)])
    groups = group_hand(view["hand"], view["trump"])
    pages = max(1, -(-len(groups) // PAGE_SIZE))
    p = min(sel.page, pages - 1)
    toggled = Counter(sel.cards)
    cards = []
    for card, count in groups[p * PAGE_SIZE : (p + 1) * PAGE_SIZE]:
        label = card_label(card, _.locale, count)
        if toggled[card]:
            mark = TOGGLED if count == 1 or toggled[card] == count else f"{TOGGLED}{toggled[card]} "
            label = mark + label
        elif card in playable:
            label = PLAYABLE + label
        if card in playable or toggled[card]:  # Telegram's button styles: green, playable now
            cards.append(button(label, press_card(card), "success"))
        else:  # a card that cannot be played now: shown greyed, pressing it does nothing
            cards.append(InlineKeyboardButton(text=label, disabled=DisabledButton()))
    rows += _rows(cards, _cards_per_row(cards))
    if pages > 1:
        rows.append(
            [
                button("◀", page(p - 1) if p > 0 else INERT),
                button(f"{p + 1}/{pages}", INERT),
                button("▶", page(p + 1) if p + 1 < pages else INERT),
            ]
        )
    actions = []
    last: list[InlineKeyboardButton] = []  # a row of its own: its label is long (#29)
    play = moves.selection_action(view, sel.cards, lg)
    if play:
        actions.append(button("▶ " + _("Play") + f" ({len(sel.cards)})", PLAY, "success"))
    if sel.cards:
        actions.append(button("✖ " + _("Clear"), CLEAR))
    if lg.take:
        actions.append(button(_("Take"), act("K"), "danger"))
    if lg.pass_:
        covered = all(cover is not None for _a, cover in view["table"]) and not view["taking"]
        actions.append(button(_("Done") if covered else _("Pass"), act("P")))
        # RULES §0 Passing: pass now and whenever asked again in this bout
        last.append(button(BOUT_PASS_MARK + " " + _("Pass for the whole bout"), BOUT_PASS))
    # short, distinct labels (issue 13): «↪ 9♦️» transfers, «🎫 9♦️» shows the pass-ticket;
    # not the card whose moves the choice above offers (#41): one button a move --
    # the same data twice on one keyboard, and a client (the sandbox's) sent no press
    for card in dict.fromkeys(c for c in lg.transfers if c != sel.choose):
        actions.append(button(f"{TRANSFER} {glyph(card, _.locale)}", act("R" + card)))
    for card in dict.fromkeys(c for c in lg.tickets if c != sel.choose):
        actions.append(button(f"{TICKET} {glyph(card, _.locale)}", act("S" + card)))
    rows += fit_rows(actions, 3)
    if last:
        rows.append(last)
    return InlineKeyboardMarkup(inline_keyboard=rows)


def _choice_label(move: str, _: Translator) -> str:
    cards = card_names(parse_card_run(move[1:]))
    if move[0] == "C":
        return f"{glyph(cards[0], _.locale)}→{glyph(cards[1], _.locale)}"
    if move[0] == "R":
        return f"{TRANSFER} {glyph(cards[0], _.locale)}"
    if move[0] == "S":
        return f"{TICKET} {glyph(cards[0], _.locale)}"
    if move[0] == "T":
        return "➕ " + _("Throw in {card}", card=glyph(cards[0], _.locale))
    return "▶ " + glyph(cards[0], _.locale)


def _cards_per_row(cards: list[InlineKeyboardButton]) -> int:
    """Six cards a row, fewer when a label would be cut on a phone («•10♥️×2»,
    #29): every row of the hand as wide as the others."""
    widest = max((label_width(b.text) for b in cards), default=0)
    return next((n for n in range(CARDS_PER_ROW, 1, -1) if widest <= row_budget(n)), 2)


def _rows(buttons: list[InlineKeyboardButton], width: int) -> list[list[InlineKeyboardButton]]:
    return [buttons[i : i + width] for i in range(0, len(buttons), width)]


def hand_screen(
    snap: Snapshot,
    seat: int,
    lang: str,
    selection: Selection,
    *,
    private_link: str | None = None,
    first: bool = False,
    app: MiniApp | None = None,
    in_group: bool = False,
) -> Screen:
    """A seat's hand message: his view, his selection; the result once over; the
    take-back button while the AI plays for him.  ``private_link``: his hand is
    in the group and the group's flood limit held it back (#24) -- a line says
    that in a private chat his cards update at once, and *Private chat* (that
    deep link) takes them there.  Where no table message shows the deal's
    commitment (a private game, an arena's), the hand does: whole in its
    ``first`` version, sent at the game's start, then its short tag (#41).  An
    arena's game says so (#41).  ``app``: the Mini App (#42, None: off) --
    the last row opens the table there: a ``web_app`` button in his private
    chat, the app's direct link (or the private chat) when his hand is shown
    ``in_group``, where Telegram refuses a ``web_app`` button."""
    t, state = snap.table, snap.loaded.state
    assert state is not None
    names = seat_names(t, lang)
    if t.status == OVER or state.over:
        return game_over_screen(snap, view(state, seat), lang)
    _ = Translator(lang)
    ai_plays = t.seats[seat].ai_controlled
    if ai_plays:  # nothing for him to wait for
        private_link = None
    notes = [FLOOD_MARK + " " + _(texts.FLOOD_HINT)] if private_link else []
    text, markup = render_hand(
        view(state, seat),
        locale=lang,
        names=names,
        game_id=t.id,
        version=snap.version,
        selection=selection,
        deadline=deadline(snap),
        ai_seats=ai_seats(t),
        notes=notes,
        warned=warned_seats(t),
        ratings=rating_labels(t),
    )
    if group_of(t) is None or t.arena:  # no table message shows the commitment
        text += "\n\n" + commitment_shown(t, _, first=first)
    if t.arena:  # #41: whose points are at stake, and where they count
        text = "🏟 " + _(texts.ARENA_HAND) + "\n" + text
    if ai_plays:
        return _(texts.AI_PLAYS) + "\n\n" + text, take_back_keyboard(t.id, _(texts.TAKE_BACK))
    if private_link:
        label = PRIVATE_MARK + " " + _("Private chat")
        button = InlineKeyboardButton(text=label, url=private_link)
        markup = InlineKeyboardMarkup(inline_keyboard=[*markup.inline_keyboard, [button]])
    return text, with_app_button(markup, app, t.id, _, in_group=in_group)
