"""A player's own page in the Mini App (#42), pure: his rating in each game
with its history (the page draws the chart), his reliability and cooldown as
``/rating`` says them, his counts as ``/stats`` says them, and his recent
games, each a link to its replay.  Only his own: the caller proved who he is."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tables.rating_model import VARIANTS, PlayerRatings, Rating
from tables.records import UserStats
from telegram_bot.views import texts
from telegram_bot.views.format import ai_name
from telegram_bot.views.i18n import VARIANT_TITLES, Translator, duration
from telegram_bot.views.miniapp import RATING_HISTORY
from telegram_bot.views.page import faces
from telegram_bot.views.replay import PICK_GAME, replay_label, replay_when


def player_page(
    me: PlayerRatings,
    name: str,
    history: Sequence[Mapping[str, Any]],
    stats: UserStats,
    recent: Sequence[tuple[str, int, Mapping[str, Any]]],
    *,
    locale: str,
    now_ms: int,
) -> dict[str, Any]:
    """``history``: his rating's entries as kept, newest first
    (:meth:`tables.ratings.Ratings.history`); ``recent``: his finished games
    still kept, newest first (table, game, record)."""
    _ = Translator(locale)
    ratings = {}
    for variant in VARIANTS:
        r = me.ratings.get(variant, Rating())
        ratings[variant] = {
            "title": _(VARIANT_TITLES[variant]),
            "rating": r.shown,
            "label": r.label,
            "provisional": r.provisional,
            "games": r.games,
            "counts": dict(stats.counts.get(variant, {})),
            "history": [
                {
                    "at": int(h["at"]),
                    "rating": int(h["rating"]),
                    "change": int(h.get("change", 0)),
                    "provisional": bool(h.get("provisional")),
                    "table": str(h.get("table", "")),
                    "game": int(h.get("game", 0)),
                }
                for h in reversed(history)  # oldest first: the chart's order
                if h.get("variant") == variant and "rating" in h and "at" in h
            ],
        }
    if me.reliability is None:
        reliability = _("Reliability: no game with other people finished yet")
    else:
        reliability = _(
            "Reliability: {pct}% — the share of recent games you played to the end (games counted: {n})",
            pct=round(me.reliability * 100),
            n=me.recent,
        )
    cooldown = None
    if me.cooldown_until is not None and me.cooldown_until > now_ms:
        left = duration((me.cooldown_until - now_ms + 999) // 1000, _)
        cooldown = _(texts.COOLDOWN_MINE, time=left)
    games = []
    for table, game, record in recent:
        seats = record.get("seats", [])
        result = record.get("result") or {}
        you = next((i for i, (u, _n) in enumerate(seats) if u == me.user), None)
        games.append(
            {
                "table": table,
                "game": game,
                "variant": record.get("variant"),
                "at": result.get("at"),
                "label": replay_label(record, _),  # a button's text: not HTML
                "when": replay_when(record),
                "players": [str(n) if u is not None else ai_name(str(n), _) for u, n in seats],
                "lost": you is not None and result.get("loser") == you,
                "draw": bool(result.get("draw")),
            }
        )
    return {
        "user": me.user,
        "name": me.name or name,
        "ratings": ratings,
        "reliability": me.reliability,
        "reliability_text": reliability,
        "cooldown": cooldown,
        "games": games,
        "labels": {
            "ratings": _("Ratings"),
            "history": _(RATING_HISTORY),
            "games": _(PICK_GAME),
            "replay": _("Replay"),
            "no_rated": _("no rated games yet"),
            "games_n": _("games: {n}", n="{n}"),
            "not_settled": _("not settled yet"),
            "none": _("No games played yet: /new or /play."),
        },
        "faces": faces(locale),
    }


__all__ = ["player_page"]
