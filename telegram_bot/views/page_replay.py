"""A finished game as the Mini App's replay viewer shows it (#42), pure: every
step at once, each the table as it was -- the page steps through them with a
slider, no round trip a step.

It shows what the chat's replay message shows (:func:`telegram_bot.views.replay.render_replay`)
and nothing more: the public view of the table (the bout, the stock's size,
the trump and its card, the discard's size, roles), every hand -- the game is
over, and only its players may replay it (:func:`engine.replay.may_watch`) --,
the move each step made in the bot's words, and the deal's key.  Never the
stock's order."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine import public_view
from engine.cards import card_names
from engine.replay import ReplayStep
from telegram_bot.views.cards import sorted_hand
from telegram_bot.views.format import action_line, isolated, short_name
from telegram_bot.views.i18n import VARIANT_TITLES, Translator
from telegram_bot.views.page import SUIT_ORDER_HIGH_FIRST, faces, page_labels, plain
from telegram_bot.views.replay import replay_names

FRAME_KEYS = (
    "attacker",
    "defender",
    "table",
    "hand_counts",
    "roles",
    "to_act",
    "trump",
    "trump_card",
    "stock_count",
    "discard_count",
    "pass_ticket",
    "taking",
    "out",
    "loser",
    "draw",
)
"""What a step keeps of the public view (:func:`engine.public_view`)."""


def replay_frame(step: ReplayStep, names: Sequence[str], _: Translator) -> dict[str, Any]:
    """One step: the table after it, every hand, the move in words."""
    state = step.state
    seen = public_view(state)
    frame: dict[str, Any] = {k: seen[k] for k in FRAME_KEYS}
    frame["step"] = step.step
    frame["bout"] = step.bout
    frame["hands"] = [
        sorted_hand(card_names(state.hand(seat)), seen["trump"]) for seat in range(state.players)
    ]
    if step.action is None:
        frame.update(seat=None, kind=None, line=_("The deal"))
    else:
        a = step.action
        cards = card_names([a.attack, *a.cards] if a.kind == "cover" else list(a.cards))
        who = isolated(short_name(names[a.seat])) if 0 <= a.seat < len(names) else "?"
        line = action_line(a.kind, who, cards, _) or a.text()
        if step.passes:
            line += " · " + _("passes: {n}", n=step.passes)
        frame.update(seat=a.seat, kind=a.kind, cards=cards, line=plain(line))
    return frame


def replay_page(steps: Sequence[ReplayStep], user: int, locale: str) -> dict[str, Any]:
    """Every step of a finished game for the viewer ``user`` (one of its
    players: the caller checked), in ``locale``."""
    _ = Translator(locale)
    record = steps[0].record
    names = replay_names(record, _)
    you = next((i for i, (u, _n) in enumerate(record["seats"]) if u == user), None)
    last = steps[-1]
    return {
        "table": record["table"],
        "game": record["game"],
        "variant": record["variant"],
        "suit_order": list(SUIT_ORDER_HIGH_FIRST) if record["variant"] == "chuvash" else None,
        "title": _(VARIANT_TITLES.get(record["variant"], record["variant"])),
        "you": you,
        "seats": [
            {"name": n, "ai": u is None} for n, (u, _n) in zip(names, record["seats"], strict=True)
        ],
        "seed": str(record["seed"]),
        "result": record.get("result"),
        "last": last.last,
        "bout_starts": list(last.bout_starts),
        "bouts": last.bouts,
        "frames": [replay_frame(s, names, _) for s in steps],
        "labels": {
            **page_labels(_),
            "replay": _("Replay"),
            "position": _("move {k} of {n} · bout {b} of {m}", k="{k}", n="{n}", b="{b}", m="{m}"),
            "hands": _("Hands"),
            "key": _("Key of the deal"),
        },
        "faces": faces(locale),
    }


__all__ = ["replay_frame", "replay_page"]
