"""Game messages from engine views (pure): the private hand message of one seat,
the group's table message (public view only) and the game-over message.

Every function takes a view dict (:func:`engine.view` / :func:`engine.public_view`),
the reader's language and the players' names by seat, and returns ``(text,
keyboard)`` for ``parse_mode="HTML"``.  Telegram's limits hold by construction:
text at most 4096 characters (older history lines go first), at most 8 buttons a
row and 100 a keyboard (huge hands are paged), callback data within 64 bytes.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import UTC, datetime

from tables.model import Table
from telegram_bot.buttons.moves import View
from telegram_bot.state.snapshot_value import Snapshot
from telegram_bot.views.cards import CARDS_HELD, glyph, suit_glyph
from telegram_bot.views.format import ai_name, bold, name_of, role_label
from telegram_bot.views.i18n import N_, VARIANT_TITLES, Translator
from telegram_bot.views.lobby import level_suffix

MAX_TEXT = 4096
HISTORY = 6


TRANSFER, TICKET = "↪", "🎫"
"""The marks of a transfer and of showing a pass-ticket (S8) on buttons."""


def fit_text(head: list[str], history: list[str], tail: list[str], _: Translator) -> str:
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


def header_lines(view: View, _: Translator) -> list[str]:
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


def table_lines(view: View, names: Sequence[str], _: Translator) -> list[str]:
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


def player_lines(
    view: View,
    names: Sequence[str],
    _: Translator,
    me: int,
    ai_seats: Collection[int] = (),
    warned: Collection[int] = (),
    ratings: Sequence[str] = (),
) -> list[str]:
    """A line per seat (``ratings``: each one's rating in a rated game, #25)."""
    lines = ["", bold(_("Players"))]
    to_act = set(view["to_act"])
    for seat in range(view["players"]):
        mark = "▶" if seat in to_act else "·"
        name = name_of(names, seat, _)
        if seat == me:
            name = bold(name) + " (" + _("you") + ")"
        if seat < len(ratings) and ratings[seat]:
            name += f" · {ratings[seat]}"
        role = role_label(view, seat, _)
        count = view["hand_counts"][seat]
        lines.append(f"{mark} {name}: {CARDS_HELD}{count}" + (f" — {role}" if role else ""))
    # the seats of players the AI plays now (timeouts, left, blocked the bot), said in
    # words; the reader's own seat says so in his message's first line instead
    others = [name_of(names, s, _) for s in sorted(ai_seats) if s != me]
    if len(others) == 1:  # one player or several: «за игрока» / «за игроков» (#29)
        lines.append(_("The AI plays for {name} now", name=others[0]))
    elif others:
        lines.append(_("The AI plays for {names} now", names=", ".join(others)))
    # #25: whose time ran out once -- the next timeout gives his seat to the AI
    late = [name_of(names, s, _) for s in sorted(warned) if s != me and s not in ai_seats]
    if late:
        lines.append("⏰ " + _(LAST_WARNING, names=", ".join(late)))
    return lines


LAST_WARNING = N_("{names}: time ran out once; the next time, the AI takes the seat")


def deadline_lines(deadline: datetime | None, _: Translator) -> list[str]:
    """The turn's deadline as Telegram's ``date_time`` entity: each client shows it
    relative ("in 45 seconds") in the reader's own language and time zone; the
    text inside is for clients that do not know the entity."""
    if deadline is None:
        return []
    return ["", "⏱ " + _("the move ends {time}", time=tg_time(deadline))]


def tg_time(at: datetime) -> str:
    """``at`` as Telegram's ``date_time`` entity, shown relative ("in 45
    seconds") in the reader's language; the text inside for older clients."""
    at = at.astimezone(UTC)
    fallback = at.strftime("%H:%M:%S UTC")
    return f'<tg-time unix="{int(at.timestamp())}" format="r">{fallback}</tg-time>'


def status_lines(view: View, names: Sequence[str], _: Translator, me: int) -> list[str]:
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


def rating_labels(table: Table) -> list[str]:
    """Each seat's rating as the table shows it while a rated game is played
    (as read at its start, #25); none in a casual game."""
    if not table.rated_game:  # #38: not rated_now -- a seat taken mid-game stays rated
        return []
    return [s.rating for s in table.seats]


def warned_seats(table: Table) -> list[int]:
    """The human seats whose time ran out once (or more) in a row and whom the AI
    does not play yet: the next timeout gives the seat to the AI (#25)."""
    return [i for i, s in enumerate(table.seats) if s.human and not s.ai_controlled and s.timeouts]


def ai_seats(table: Table) -> list[int]:
    """The human seats the AI plays now (timeouts, left, blocked the bot, operator)."""
    return [i for i, s in enumerate(table.seats) if s.human and s.ai_controlled]


def deadline(snap: Snapshot) -> datetime | None:
    d = snap.loaded.deadline
    return datetime.fromtimestamp(d / 1000, UTC) if d else None
