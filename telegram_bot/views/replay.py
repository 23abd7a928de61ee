"""A replay step's message (issue #16, pure): the table as it was after that
move -- every hand shown, since the game is over -- the move itself, and the
buttons ◀ ▶ (one move), ⏮ ⏭ (one bout), ⏪ ⏩ (start, end)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from aiogram.types import InlineKeyboardButton, InlineKeyboardMarkup

from engine import public_view
from engine.cards import card_names
from engine.replay import ReplayStep
from telegram_bot.buttons.callbacks import ReplayCb, ReplayOp
from telegram_bot.views.board import MAX_TEXT, render_table
from telegram_bot.views.cards import glyphs, sorted_hand
from telegram_bot.views.format import action_line, ai_name, bold, name_of
from telegram_bot.views.i18n import N_, VARIANT_TITLES, Translator

# answers of the replay handlers (telegram_bot/handlers/replay.py)
EXPIRED = N_("This game's record is no longer kept: replays are kept for {days} days.")
NOT_YOURS = N_("Only the game's players can replay it.")
NO_GAMES = N_("You have no finished game to replay (replays are kept for {days} days).")
PICK_GAME = N_("Your recent games: pick one to replay it move by move.")
IN_PRIVATE = N_("Send /replay to me in a private chat.")
SENT = N_("The replay is in our private chat.")
START_FIRST = N_("Start a private chat with me first, then press Replay again.")


def render_replay(step: ReplayStep, *, locale: str) -> tuple[str, InlineKeyboardMarkup]:
    _ = Translator(locale)
    state = step.state
    seats = step.record["seats"]  # (user, name); an AI seat has no user: named in its words
    names = [str(n) if u is not None else ai_name(str(n), _) for u, n in seats]
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
    trump = public_view(state)["trump"]
    hands = [bold(_("Hands"))]
    for seat in range(state.players):
        held = glyphs(sorted_hand(card_names(state.hand(seat)), trump), locale) or "—"
        hands.append(f"{name_of(names, seat, _)}: {held}")
    table, _markup = render_table(public_view(state), locale=locale, names=names, history=0)
    seed = step.record["seed"]
    foot = "🔓 " + _("Seed of the deal") + f": <code>{seed}</code>"
    text = "\n".join([head, "👉 " + what, "", table, "", *hands, "", foot])
    return text[:MAX_TEXT], replay_keyboard(step)


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
            [
                button("⏪", 0),
                button(f"{step.step}/{step.last}", step.step),
                button("⏩", step.last),
            ],
        ]
    )


def replay_label(record: dict[str, Any], _: Translator) -> str:
    """A /replay list entry: the game, when it ended, who played."""
    at = datetime.fromtimestamp(record["result"]["at"] / 1000, UTC).strftime("%d.%m %H:%M")
    who = ", ".join(str(n) for _u, n in record["seats"])
    return f"{_(VARIANT_TITLES[record['variant']])} · {at} · {who}"[:60]


__all__ = ["render_replay", "replay_keyboard", "replay_label"]
