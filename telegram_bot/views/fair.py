"""The provably fair deal in the game's messages (issue #16, docs/FAIRNESS.md):
the game's first message shows the deal's commitment (a short prefix, the whole
SHA-256 in an expandable quote) before anyone moves -- the group's table
message, or, where no table message shows it, each hand -- and so does the
result; every later version of a live message shows the short prefix alone
(#41: the whole of it on every edit pushed the cards and the prompt down).
Once the game is over, a *Replay* button and *Check the deal*, which shows the
seed, the commitment and the command that checks them in words a player reads
-- no command line in the result (#29).  Pure: no I/O."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aiogram.types import InlineKeyboardButton, InlineKeyboardMarkup

from engine.fairness import commitment
from tables.model import Table
from telegram_bot.buttons.callbacks import ReplayCb, ReplayOp, WatchCb
from telegram_bot.views.i18n import N_, Translator
from telegram_bot.views.keyboards import fit_rows

WATCH_ANSWERS = {
    # telegram_bot.usecases.watch.WatchStatus
    "watching": N_("You are watching: the table is in our private chat."),
    "no_table": N_("This game no longer exists (finished or expired)."),
    "not_started": N_("The game has not started yet."),
    "not_a_group": N_("Only games played in a group can be watched."),
    "forbidden": N_("This game does not allow spectators."),
    "seated": N_("You play at this table: 🎴 My cards shows your cards."),
    "closed": N_("Start a private chat with me first, then press Watch again."),
}
WATCH_HOW = N_("Send /watch with the game's code, or press Watch under the group's table.")
SHORT = 12
"""Hex digits of the commitment shown inline."""


def table_commitment(t: Table) -> str:
    """The commitment of the table's current game (engine/fairness.py)."""
    return commitment(t.seed, t.variant, len(t.seats), t.options)


def verify_command(
    seed: int | str,
    commit: str,
    variant: str,
    players: int,
    options: Mapping[str, Any],
    previous_loser: int | None = None,
) -> str:
    """``python -m engine verify`` with a game's seed, commitment and settings:
    the Shchelkovsky options only for a Shchelkovsky game (#29: a Chuvash game
    printed ``--decks 1 --keep-jokers``, which ``--help`` calls Shchelkovsky's)."""
    args = [f"--variant {variant}", f"--players {players}"]
    if variant == "shchelkovsky":
        args.append(f"--decks {options.get('decks', 2)}")
        if options.get("remove_joker") is False:
            args.append("--keep-jokers")
    if previous_loser is not None:
        args.append(f"--previous-loser {previous_loser}")
    return f"python -m engine verify {seed} {commit} " + " ".join(args)


def commitment_lines(t: Table, _: Translator) -> str:
    """The whole commitment: shown before the first move (the game's first
    message) and in the result -- the deal is fixed and cannot change."""
    full = table_commitment(t)
    title, what = _("Fair deal"), _("Fingerprint of the deal (SHA-256 of its secret key)")
    return (
        f"🔒 {title}: <code>{full[:SHORT]}</code>\n"
        f"<blockquote expandable>{what}: <code>{full}</code></blockquote>"
    )


def commitment_tag(t: Table, _: Translator) -> str:
    """One line on every later version of a live message (#41): the prefix of
    the commitment the game's first message showed whole."""
    return f"🔒 {_('Fair deal')}: <code>{table_commitment(t)[:SHORT]}</code>"


def commitment_shown(t: Table, _: Translator, *, first: bool) -> str:
    """The commitment a live message shows: whole in its ``first`` version, the
    game's first message; else its short tag."""
    return commitment_lines(t, _) if first else commitment_tag(t, _)


CHECK_EXPLAINED = N_(
    "While the game was played, its table showed the deal's fingerprint: the SHA-256 of "
    "a secret key and the game's settings. Now the key is revealed. The same key always "
    "gives the same fingerprint and the same deal, and no other key gives that "
    "fingerprint: so the cards were fixed before the first move, and nobody could change "
    "them during the game."
)
CHECK_HOW = N_(
    "To check it yourself, run this in a copy of the bot's source code; it prints the "
    "hands each player was dealt (docs/FAIRNESS.md explains every step):"
)
CHECK_SHORT = N_(
    "The deal's key: {seed}. Start a private chat with me, then press Check the deal again: "
    "I will send you how to check it."
)

CHECK_SENT = N_("How to check the deal is in our private chat.")


def deal_check_text(record: Mapping[str, Any], _: Translator) -> str:
    """*Check the deal* (#29): the key revealed, the fingerprint, in plain words,
    and the command that checks them, from the game's record."""
    seed, commit = record["seed"], record["commitment"]
    command = verify_command(
        seed,
        commit,
        record["variant"],
        record["players"],
        record.get("options") or {},
        record.get("previous_loser"),
    )
    return "\n".join(
        [
            "🔎 <b>" + _("Check the deal") + "</b>",
            "",
            _(CHECK_EXPLAINED),
            "",
            "🔓 " + _("Key of the deal") + f": <code>{seed}</code>",
            "🔒 "
            + _("Fingerprint of the deal (SHA-256 of its secret key)")
            + f": <code>{commit}</code>",
            "",
            _(CHECK_HOW),
            f"<pre>{command}</pre>",
        ]
    )


def check_button(t: Table, _: Translator) -> InlineKeyboardButton:
    data = ReplayCb(table=t.id, game=t.game_no, step=0, op=ReplayOp.CHECK).pack()
    return InlineKeyboardButton(text="🔎 " + _("Check the deal"), callback_data=data)


def replay_button(t: Table, _: Translator) -> InlineKeyboardButton:
    data = ReplayCb(table=t.id, game=t.game_no, step=0, op=ReplayOp.OPEN).pack()
    return InlineKeyboardButton(text="🎞 " + _("Replay"), callback_data=data)


def with_replay(
    markup: InlineKeyboardMarkup | None, t: Table, _: Translator
) -> InlineKeyboardMarkup:
    """``markup`` with *Replay* and *Check the deal* added (a row of their own
    each when the two do not fit one)."""
    rows = list(markup.inline_keyboard) if markup is not None else []
    return InlineKeyboardMarkup(
        inline_keyboard=[*rows, *fit_rows([replay_button(t, _), check_button(t, _)], 2)]
    )


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
