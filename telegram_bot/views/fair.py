"""The provably fair deal in the game's messages (issue #16, docs/FAIRNESS.md):
while a game is played its messages show the deal's commitment (a short prefix,
the whole SHA-256 in an expandable quote); once it is over, the seed and the
command that checks it, and a *Replay* button (pure: no I/O)."""

from __future__ import annotations

from aiogram.types import InlineKeyboardButton, InlineKeyboardMarkup

from engine.fairness import commitment
from tables import Table
from telegram_bot.buttons.callbacks import ReplayCb, ReplayOp, WatchCb
from telegram_bot.views.i18n import N_, Translator

WATCH_ANSWERS = {
    # telegram_bot.usecases.watch.WatchStatus
    "watching": N_("You are watching: the table is in our private chat."),
    "no_table": N_("This game no longer exists (finished or expired)."),
    "not_started": N_("The game has not started yet."),
    "not_a_group": N_("Only games played in a group can be watched."),
    "forbidden": N_("This game does not allow spectators."),
    "seated": N_("You play at this table: your cards are in our private chat."),
    "closed": N_("Start a private chat with me first, then press Watch again."),
}
WATCH_HOW = N_("Send /watch with the game's code, or press Watch under the group's table.")
SHORT = 12
"""Hex digits of the commitment shown inline."""


def table_commitment(t: Table) -> str:
    """The commitment of the table's current game (engine/fairness.py)."""
    return commitment(t.seed, t.variant, len(t.seats), t.options)


def verify_command(t: Table) -> str:
    """``python -m engine verify`` with this game's seed, commitment and settings."""
    args = [f"--variant {t.variant}", f"--players {len(t.seats)}"]
    if "decks" in t.options:
        args.append(f"--decks {t.options['decks']}")
    if t.options.get("remove_joker") is False:
        args.append("--keep-jokers")
    return f"python -m engine verify {t.seed} {table_commitment(t)} " + " ".join(args)


def commitment_lines(t: Table, _: Translator) -> str:
    """Shown while the game is played: the deal is fixed and cannot change."""
    full = table_commitment(t)
    title, what = _("Fair deal"), _("Commitment (SHA-256 of the secret seed)")
    return (
        f"🔒 {title}: <code>{full[:SHORT]}</code>\n"
        f"<blockquote expandable>{what}: <code>{full}</code></blockquote>"
    )


def seed_lines(t: Table, _: Translator) -> str:
    """Shown once the game is over: the seed, and how to check it."""
    full = table_commitment(t)
    seed, commit, check = _("Seed of the deal"), _("commitment"), _("Check the deal")
    return (
        f"🔓 {seed}: <code>{t.seed}</code> · {commit} <code>{full[:SHORT]}</code>\n"
        f"<blockquote expandable>{check}: <code>{verify_command(t)}</code></blockquote>"
    )


def replay_button(t: Table, _: Translator) -> InlineKeyboardButton:
    data = ReplayCb(table=t.id, game=t.game_no, step=0, op=ReplayOp.OPEN).pack()
    return InlineKeyboardButton(text="🎞 " + _("Replay"), callback_data=data)


def with_replay(
    markup: InlineKeyboardMarkup | None, t: Table, _: Translator
) -> InlineKeyboardMarkup:
    """``markup`` with a *Replay* row added."""
    rows = list(markup.inline_keyboard) if markup is not None else []
    return InlineKeyboardMarkup(inline_keyboard=[*rows, [replay_button(t, _)]])


def with_watch(
    markup: InlineKeyboardMarkup | None, t: Table, _: Translator
) -> InlineKeyboardMarkup | None:
    """The group's table message: a *Watch* row when the lobby allows spectators."""
    if not t.spectators:
        return markup
    rows = list(markup.inline_keyboard) if markup is not None else []
    data = WatchCb(table=t.id).pack()
    button = InlineKeyboardButton(text="👀 " + _("Watch in private"), callback_data=data)
    return InlineKeyboardMarkup(inline_keyboard=[*rows, [button]])
