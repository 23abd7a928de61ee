"""A replay step's message (issue #16, pure): the table as it was after that
move -- every hand shown, since the game is over -- the move itself, and the
buttons ◀ ▶ (one move), ⏮ ⏭ (one bout), ⏪ ⏩ (start, end), which its last
line names (#41)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from aiogram.types import InlineKeyboardButton, InlineKeyboardMarkup

from engine import public_view
from engine.ai import LEVEL_OF
from engine.cards import card_names
from engine.replay import ReplayStep
from telegram_bot.buttons.callbacks import ReplayCb, ReplayOp
from telegram_bot.views.board import MAX_TEXT
from telegram_bot.views.cards import glyphs, sorted_hand
from telegram_bot.views.format import action_line, ai_name, bold, name_of
from telegram_bot.views.i18n import LEVEL_TITLES, N_, Translator
from telegram_bot.views.keyboards import label_width, row_budget
from telegram_bot.views.miniapp import MiniApp, replay_button
from telegram_bot.views.table import render_table

# answers of the replay handlers (telegram_bot/handlers/replay.py)
EXPIRED = N_("This game's record is no longer kept: replays are kept for {days} days.")
NOT_YOURS = N_("Only the game's players can replay it.")
NO_GAMES = N_("You have no finished game to replay (replays are kept for {days} days).")
PICK_GAME = N_("Your recent games: pick one to replay it move by move.")
IN_PRIVATE = N_("Send /replay to me in a private chat.")
SENT = N_("The replay is in our private chat.")
START_FIRST = N_("Start a private chat with me first, then press Replay again.")
REPLAY_LEGEND = N_("◀ ▶ one move · ⏮ ⏭ one bout · ⏪ ⏩ to the start or the end")
"""#41: the two rows of arrows under a replay were hard to tell apart."""


def render_replay(
    step: ReplayStep, *, locale: str, app: MiniApp | None = None
) -> tuple[str, InlineKeyboardMarkup]:
    """The step's message; with the Mini App on (``app``), a last button that
    opens the replay at this step in its viewer (#42)."""
    _ = Translator(locale)
    state = step.state
    names = replay_names(step.record, _)
    head = (
        "🎞 "
        + bold(_("Replay"))
        + " · "
        + _(
            "move {k} of {n} · bout {b} of {m}", k=step.step, n=step.last, b=step.bout, m=step.bouts
        )
    )
    if step.action is None:
        what = _("The deal")
    else:
        a = step.action
        cards = card_names([a.attack, *a.cards] if a.kind == "cover" else list(a.cards))
        what = action_line(a.kind, name_of(names, a.seat, _), cards, _) or a.text()
        if step.passes:  # the passes this step carries (#29)
            # in words (#41): «⏭×1» read as the ⏭ under it, which skips a bout
            what += " · " + _("passes: {n}", n=step.passes)
    trump = public_view(state)["trump"]
    hands = [bold(_("Hands"))]
    for seat in range(state.players):
        held = glyphs(sorted_hand(card_names(state.hand(seat)), trump), locale) or "—"
        hands.append(f"{name_of(names, seat, _)}: {held}")
    table, _markup = render_table(public_view(state), locale=locale, names=names, history=0)
    seed = step.record["seed"]
    foot = "🔓 " + _("Key of the deal") + f": <code>{seed}</code>"
    # #41: what each row of arrows does, just above them (cut last if too long)
    legend = _(REPLAY_LEGEND)
    text = "\n".join([head, "👉 " + what, "", table, "", *hands, "", foot])
    markup = replay_keyboard(step)
    if app is not None:
        rec = step.record
        button = replay_button(app, rec["table"], rec["game"], step.step, _)
        markup = InlineKeyboardMarkup(inline_keyboard=[*markup.inline_keyboard, [button]])
    return text[: MAX_TEXT - len(legend) - 2] + "\n\n" + legend, markup


def replay_names(record: Mapping[str, Any], _: Translator) -> list[str]:
    """The seats' names as a replay says them (raw text): an AI seat -- it has
    no user -- in the reader's words, with its level from the kind the record
    keeps (#29)."""
    seats = record["seats"]  # (user, name)
    kinds = record.get("ai") or [None] * len(seats)
    return [
        str(n) if u is not None else ai_name(str(n), _) + _level(kind, _)
        for (u, n), kind in zip(seats, kinds, strict=False)
    ]


def _level(kind: str | None, _: Translator) -> str:
    """`` (hard)`` after an AI seat's name, from the kind the record keeps."""
    level = LEVEL_OF.get(kind or "")
    return f" ({_(LEVEL_TITLES[level])})" if level else ""


def replay_keyboard(step: ReplayStep) -> InlineKeyboardMarkup:
    rec: Mapping[str, Any] = step.record

    def button(text: str, to: int) -> InlineKeyboardButton:
        data = ReplayCb(table=rec["table"], game=rec["game"], step=to, op=ReplayOp.STEP).pack()
        return InlineKeyboardButton(text=text, callback_data=data)

    return InlineKeyboardMarkup(
        inline_keyboard=[
            [
                button("⏮", step.prev_bout()),
                button("◀", max(step.step - 1, 0)),
                button("▶", min(step.step + 1, step.last)),
                button("⏭", step.next_bout()),
            ],
            # #41: no «4/96» between them: it did nothing when pressed, and the
            # head says «move 4 of 96»
            [button("⏪", 0), button("⏩", step.last)],
        ]
    )


GAME_MARKS = {"chuvash": "🐓", "shchelkovsky": "🤡"}
"""A game's mark in a /replay entry (its loser's icon in the result)."""


def replay_when(record: Mapping[str, Any]) -> str:
    """A game's mark and when it ended, in UTC and saying so: ``🐓 07.12 11:00 UTC``."""
    at = datetime.fromtimestamp(record["result"]["at"] / 1000, UTC).strftime("%d.%m %H:%M UTC")
    return f"{GAME_MARKS.get(record['variant'], '🃏')} {at}"


def replay_label(record: Mapping[str, Any], _: Translator) -> str:
    """A /replay list entry that a phone shows whole (#29): the game's mark, when
    it ended -- in UTC, and saying so --, and as many of its players as fit
    («+2» for the rest), never a name cut in the middle."""
    head = replay_when(record) + " · "
    names = [str(n) if u is not None else ai_name(str(n), _) for u, n in record["seats"]]
    for shown in range(len(names), 0, -1):
        rest = len(names) - shown
        label = head + ", ".join(names[:shown]) + (f" +{rest}" if rest else "")
        if label_width(label) <= row_budget(1):
            return label
    return head + f"+{len(names)}"


__all__ = ["render_replay", "replay_keyboard", "replay_label", "replay_names", "replay_when"]
