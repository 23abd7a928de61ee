"""Game messages from engine views (pure): the private hand message of one seat,
the group's table message (public view only) and the game-over message.

Every function takes a view dict (:func:`engine.view` / :func:`engine.public_view`),
the reader's language and the players' names by seat, and returns ``(text,
keyboard)`` for ``parse_mode="HTML"``.  Telegram's limits hold by construction:
text at most 4096 characters (older history lines go first), at most 8 buttons a
row and 100 a keyboard (huge hands are paged), callback data within 64 bytes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from datetime import UTC, datetime

from aiogram.types import DisabledButton, InlineKeyboardButton, InlineKeyboardMarkup

from engine.cards import card_names, parse_card_run
from telegram_bot.buttons import moves
from telegram_bot.buttons.callbacks import (
    BACK,
    BOUT_PASS,
    CLEAR,
    INERT,
    PLAY,
    GameCb,
    LobbyCb,
    LobbyOp,
    Press,
    act,
    page,
    press_card,
)
from telegram_bot.buttons.moves import View
from telegram_bot.views.cards import CARDS_HELD, card_label, glyph, group_hand, suit_glyph
from telegram_bot.views.format import bold, history_lines, name_of, role_label
from telegram_bot.views.i18n import LOSER_TITLES, VARIANT_TITLES, Translator
from telegram_bot.views.keyboards import cards_row

MAX_TEXT = 4096
MAX_ROW = 8
MAX_BUTTONS = 100
CARDS_PER_ROW = 6
PAGE_SIZE = 24
"""Distinct cards per page of a hand: four rows of six."""
MAX_CHOICES = 20
HISTORY = 6
PLAYABLE = "•"
TOGGLED = "✓"


BOUT_PASS_MARK = "⏭"
"""The mark of "pass for the rest of this bout"."""
TRANSFER, TICKET = "↪", "🎫"
"""The marks of a transfer and of showing a pass-ticket (S8) on buttons."""


def _fit(head: list[str], history: list[str], tail: list[str], _: Translator) -> str:
    """Join the sections, keeping as many of the newest history lines as fit."""

    def join(lines: list[str]) -> str:
        parts = [*head]
        if lines:
            parts += ["", bold(_("Last moves")), *(f"· {line}" for line in lines)]
        return "\n".join([*parts, *tail]).strip()

    lo, hi = 0, len(history)  # the most lines that fit lies in [lo, hi]
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if len(join(history[len(history) - mid :])) <= MAX_TEXT:
            lo = mid
        else:
            hi = mid - 1
    return join(history[len(history) - lo :])[:MAX_TEXT]


def _header(view: View, _: Translator) -> list[str]:
    title = _(VARIANT_TITLES[view["variant"]])
    bits = [f"<b>{title}</b>"]
    if view["trump"]:
        trump = suit_glyph(view["trump"])
        if view["trump_card"] and view["stock_count"]:
            bits.append(
                _(
                    "trump {suit} ({card} at the bottom)",
                    suit=trump,
                    card=glyph(view["trump_card"], _.locale),
                )
            )
        else:
            bits.append(_("trump {suit}", suit=trump))
    elif view["variant"] == "chuvash":
        bits.append(_("no trump"))
    bits.append(_("stock: {n}", n=view["stock_count"]))
    bits.append(_("discard: {n}", n=view["discard_count"]))
    return [" · ".join(bits)]


def _table(view: View, names: Sequence[str], _: Translator) -> list[str]:
    lines = [""]
    ticket = view.get("pass_ticket")
    if ticket:
        who = name_of(names, ticket["seat"], _)
        lines.append(
            "🎫 "
            + _(
                "{name} showed the pass-ticket {card}",
                name=who,
                card=glyph(ticket["card"], _.locale),
            )
        )
    if not view["table"]:
        lines.append(bold(_("Table")) + ": " + _("empty"))
        return lines
    lines.append(bold(_("Table")) + " (" + _("attack → cover") + "):")
    for attack, cover in view["table"]:
        lines.append(f"{glyph(attack, _.locale)} → {glyph(cover, _.locale) if cover else '…'}")
    if view["variant"] == "shchelkovsky" and view["thrown"]:
        lines.append(_("thrown in: {n} of 10", n=view["thrown"]))
    return lines


def _players(
    view: View, names: Sequence[str], _: Translator, me: int, ai_seats: Collection[int] = ()
) -> list[str]:
    lines = ["", bold(_("Players"))]
    to_act = set(view["to_act"])
    for seat in range(view["players"]):
        mark = "▶" if seat in to_act else "·"
        name = name_of(names, seat, _)
        if seat == me:
            name = bold(name) + " (" + _("you") + ")"
        role = role_label(view, seat, _)
        count = view["hand_counts"][seat]
        lines.append(f"{mark} {name}: {CARDS_HELD}{count}" + (f" — {role}" if role else ""))
    # the seats of players the AI plays now (timeouts, left, blocked the bot), said in
    # words; the reader's own seat says so in his message's first line instead
    others = [name_of(names, s, _) for s in sorted(ai_seats) if s != me]
    if others:
        lines.append(_("The AI plays for {names}", names=", ".join(others)))
    return lines


def _deadline(deadline: datetime | None, _: Translator) -> list[str]:
    """The turn's deadline as Telegram's ``date_time`` entity: each client shows it
    relative ("in 45 seconds") in the reader's own language and time zone; the
    text inside is for clients that do not know the entity."""
    if deadline is None:
        return []
    at = deadline.astimezone(UTC)
    fallback = at.strftime("%H:%M:%S UTC")
    when = f'<tg-time unix="{int(at.timestamp())}" format="r">{fallback}</tg-time>'
    return ["", "⏱ " + _("the move ends {time}", time=when)]


def _status(view: View, names: Sequence[str], _: Translator, me: int) -> list[str]:
    if view["phase"] == "over":
        return ["", bold(_("Game over"))]
    to_act = view["to_act"]
    if me >= 0 and me in to_act and view.get("legal"):
        if view["phase"] == "lead":
            hint = _("lead")
        elif me == view["defender"]:
            hint = _("cover or take")
        else:
            hint = _("throw in or pass")
        return ["", "👉 " + _("<b>Your move</b>: {what}", what=hint)]
    if me >= 0 and view["roles"][me] == "out":
        return ["", _("You are out of this game: watch the others finish.")]
    waiting = ", ".join(name_of(names, s, _) for s in to_act)
    return ["", "⏳ " + _("Waiting for {names}", names=waiting)] if waiting else []


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
) -> tuple[str, InlineKeyboardMarkup]:
    """The private hand message of ``view["seat"]``: the table, trump, stock, every
    seat's count and role (``ai_seats``: human seats the AI plays now), the last
    moves, the timer, whose move it is; keyboard: his cards (playable ones marked,
    toggled ones ticked) and the actions legal now."""
    _ = Translator(locale)
    me = view["seat"]
    sel = moves.clean(view, selection or moves.Selection())
    head = _header(view, _) + _table(view, names, _) + _players(view, names, _, me, ai_seats)
    tail = _deadline(deadline, _) + _status(view, names, _, me)
    text = _fit(head, history_lines(view, names, _, history), tail, _)
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
        rows += _rows(choices, 4)
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
    rows += _rows(cards, CARDS_PER_ROW)
    if pages > 1:
        rows.append(
            [
                button("◀", page(p - 1) if p > 0 else INERT),
                button(f"{p + 1}/{pages}", INERT),
                button("▶", page(p + 1) if p + 1 < pages else INERT),
            ]
        )
    actions = []
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
        actions.append(button(BOUT_PASS_MARK + " " + _("Pass all bout"), BOUT_PASS))
    # short, distinct labels (issue 13): «↪ 9♦️» transfers, «🎫 9♦️» shows the pass-ticket
    for card in dict.fromkeys(lg.transfers):
        actions.append(button(f"{TRANSFER} {glyph(card, _.locale)}", act("R" + card)))
    for card in dict.fromkeys(lg.tickets):
        actions.append(button(f"{TICKET} {glyph(card, _.locale)}", act("S" + card)))
    rows += _rows(actions, 3)
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


def _rows(buttons: list[InlineKeyboardButton], width: int) -> list[list[InlineKeyboardButton]]:
    return [buttons[i : i + width] for i in range(0, len(buttons), width)]


# ------------------------------------------------------------------ group table
def render_table(
    view: View,
    *,
    locale: str,
    names: Sequence[str],
    deadline: datetime | None = None,
    bot_username: str | None = None,
    history: int = HISTORY,
    ai_seats: Collection[int] = (),
    code: str | None = None,
) -> tuple[str, InlineKeyboardMarkup | None]:
    """The group's table message from the public view (``ai_seats``: human seats
    the AI plays now): no hand, no legal actions; optionally a button that opens
    the private chat with the bot (the hands) -- with the table's ``code``
    (issue 14) that button shows the presser's hand
    in the group, only to him, and *In private* opens it in the private chat."""
    _ = Translator(locale)
    head = _header(view, _) + _table(view, names, _) + _players(view, names, _, -1, ai_seats)
    tail = _deadline(deadline, _) + _status(view, names, _, -1)
    text = _fit(head, history_lines(view, names, _, history), tail, _)
    if not bot_username:
        return text, None
    url = f"https://t.me/{bot_username}"
    label = CARDS_HELD + " " + _("My cards")
    if code is None:
        row = [InlineKeyboardButton(text=label, url=url)]
    else:
        row = cards_row(code, bot_username, label, "🔒 " + _("In private"))
    return text, InlineKeyboardMarkup(inline_keyboard=[row])


# ------------------------------------------------------------------ game over
def render_game_over(
    view: View, *, locale: str, names: Sequence[str], code: str | None = None
) -> tuple[str, InlineKeyboardMarkup | None]:
    """The result: finish order and the loser («чувашский петух» / «дурак») or a
    draw; a *Rematch* button when the lobby ``code`` is given."""
    _ = Translator(locale)
    title = _(VARIANT_TITLES[view["variant"]])
    lines = [bold(_("Game over")) + " · " + title, ""]
    for place, seat in enumerate(view["out"], start=1):
        lines.append(f"{place}. {name_of(names, seat, _)}")
    if view["draw"]:
        lines += ["", _("The game is a draw")]
    elif view["loser"] is not None:
        loser = name_of(names, view["loser"], _)
        icon = "🐓" if view["variant"] == "chuvash" else "🤡"
        what = _(LOSER_TITLES[view["variant"]])
        lines += ["", f"{icon} " + _("<b>{name}</b> is {title}!", name=loser, title=what)]
    text = "\n".join(lines)
    if code is None:
        return text, None
    data = LobbyCb(code=code, op=LobbyOp.REMATCH).pack()
    markup = InlineKeyboardMarkup(
        inline_keyboard=[[InlineKeyboardButton(text="🔁 " + _("Rematch"), callback_data=data)]]
    )
    return text, markup
