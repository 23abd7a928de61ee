"""Lobby, settings, invitation, statistics and leaderboard messages (pure).

A lobby is anything shaped like the table service's table record (``id`` -- the
invite code --, ``variant``, ``options``, ``max_seats``, ``timer``, ``seats`` with
``name``/``user``/``ai``, ``creator``): see :class:`LobbyLike`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from aiogram.types import InlineKeyboardButton, InlineKeyboardMarkup

from engine.ai import LEVEL_OF
from tables.model import CANCELLED, OVER
from tables.rating_model import BoardRow, PlayerRatings
from telegram_bot.buttons.callbacks import (
    LobbyCb,
    LobbyOp,
)
from telegram_bot.state.snapshot_value import Snapshot
from telegram_bot.views import texts
from telegram_bot.views.format import ai_name, bold, user_text
from telegram_bot.views.i18n import (
    GAME_INVITES,
    LEVEL_TITLES,
    N_,
    VARIANT_TITLES,
    Translator,
    duration,
)
from telegram_bot.views.keyboards import Screen, even_rows, fit_rows

MAX_PLAYERS = {"chuvash": 6, "shchelkovsky": 10}  # C2, S2
TIMERS = (0, 30, 60, 120)


class SeatLike(Protocol):
    @property
    def user(self) -> int | None: ...
    @property
    def name(self) -> str: ...
    @property
    def ai(self) -> str | None: ...
    @property
    def rating(self) -> str: ...


class LobbyLike(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def variant(self) -> str: ...
    @property
    def options(self) -> Mapping[str, Any]: ...
    @property
    def max_seats(self) -> int: ...
    @property
    def timer(self) -> int: ...
    @property
    def seats(self) -> Sequence[SeatLike]: ...
    @property
    def creator(self) -> int: ...
    @property
    def ai_kind(self) -> str: ...
    @property
    def rated(self) -> bool: ...
    @property
    def fresh(self) -> Sequence[int]: ...
    @property
    def capped(self) -> Sequence[tuple[int, int]]: ...
    @property
    def narrow(self) -> Sequence[tuple[int, int]]: ...


def deep_link(bot_username: str, code: str) -> str:
    """``t.me/<bot>?start=<code>``: opens the private chat and joins the lobby."""
    return f"https://t.me/{bot_username}?start={code}"


def settings_line(lobby: LobbyLike, _: Translator) -> str:
    bits = []
    if lobby.variant == "shchelkovsky":
        bits.append(_("decks: {n}", n=lobby.options.get("decks", 2)))
        if lobby.options.get("remove_joker", True):
            bits.append(_("one joker removed"))
        else:
            bits.append(_("all jokers"))
    bits.append(_("timer: {s} s", s=lobby.timer) if lobby.timer else _("no timer"))
    bits.append(_("players: {n} of {max}", n=len(lobby.seats), max=lobby.max_seats))
    return " · ".join(bits) + "\n" + rated_line(lobby, _)


def _counting(lobby: LobbyLike) -> list[tuple[int, int]]:
    """The pairs of its players whose result against each other would count
    (#38: neither new, not past the farming guard nor short of other
    opponents; ``Table.counting_pairs``)."""
    us = sorted(s.user for s in lobby.seats if s.user is not None and s.user not in lobby.fresh)
    off = {tuple(p) for p in (*lobby.capped, *lobby.narrow)}
    return [(a, b) for i, a in enumerate(us) for b in us[i + 1 :] if (a, b) not in off]


def rated(lobby: LobbyLike) -> bool:
    """Its next game would be rated (#25): rated chosen, every seat human, and
    -- with two players or more -- some two of them count against each other
    (#38; ``Table.rated_now``)."""
    if not (lobby.rated and all(s.user is not None for s in lobby.seats)):
        return False
    return len(lobby.seats) < 2 or bool(_counting(lobby))


def _names(lobby: LobbyLike, users: Sequence[int]) -> str:
    return ", ".join(user_text(s.name) for s in lobby.seats if s.user in users)


def rated_line(lobby: LobbyLike, _: Translator) -> str:
    """Rated or casual, and why casual when rated was chosen (#25); #38: for
    whom it is not rated -- new players --, and which two do not count
    against each other (the farming guard, the opponent-diversity guard)."""
    if not lobby.rated:
        return "🎲 " + _("Casual game: ratings do not change")
    if not all(s.user is not None for s in lobby.seats):
        return "🎲 " + _("Casual game: only games without AI players are rated")
    seated = {s.user for s in lobby.seats}
    lines = ["🏆 " + _("Rated game") if rated(lobby) else "🎲 " + _("Casual game")]
    fresh = [u for u in lobby.fresh if u in seated]
    if fresh:
        lines.append("🆕 " + _(
            "Not rated for {names} yet: a new player's games count once they have played "
            "a few games with other people over a couple of days.",
            names=_names(lobby, fresh),
        ))  # fmt: skip
    for a, b in lobby.capped:
        if a in seated and b in seated:
            lines.append("⏸ " + _(
                "{a} and {b} have played their rated games of the day together: their "
                "result against each other does not count for now.",
                a=_names(lobby, [a]),
                b=_names(lobby, [b]),
            ))  # fmt: skip
    for a, b in lobby.narrow:
        if a in seated and b in seated:
            lines.append("🤝 " + _(
                "{a} and {b} do not count against each other yet: each of them must "
                "also have played a few other people lately.",
                a=_names(lobby, [a]),
                b=_names(lobby, [b]),
            ))  # fmt: skip
    return "\n".join(lines)


def level_suffix(seat: SeatLike, _: Translator) -> str:
    """`` (hard)`` after an AI seat's name (its level, ``engine.ai.LEVELS``): in
    parentheses, so a move line reads «Компьютер 1 (сложный) пасует», not
    «Компьютер 1 · сложный пасует»."""
    level = LEVEL_OF.get(seat.ai or "") if seat.user is None else None
    return f" ({_(LEVEL_TITLES[level])})" if level else ""


def _seat_line(i: int, seat: SeatLike, lobby: LobbyLike, _: Translator) -> str:
    if seat.user is None:
        name = "🤖 " + (user_text(ai_name(seat.name, _)) if seat.name else _("AI player"))
        name += level_suffix(seat, _)
    else:
        name = user_text(seat.name) if seat.name else _("Seat {n}", n=i + 1)
        if rated(lobby) and seat.rating:  # his rating in this game, when rated (#25)
            name += f" · {seat.rating}"
        if seat.ai:
            name += " (🤖)"
    if seat.user is not None and seat.user == lobby.creator:
        name += " ⭐"
    return f"{i + 1}. {name}"


CREATOR_MARK = N_("⭐ opened the lobby: starts the game, changes the settings")
PROVISIONAL_MARK = N_("? after a rating: too few games yet to be sure of it")
"""#41: the marks of the seat lines (:func:`_seat_line`), named under them."""


def seat_legend(lobby: LobbyLike, _: Translator) -> list[str]:
    """One line under the seats naming the marks they show (#41: «1000? ⭐» was
    unexplained): ⭐ when the lobby's creator sits, ? when a shown rating is
    provisional; none without marks."""
    marks = []
    if any(s.user is not None and s.user == lobby.creator for s in lobby.seats):
        marks.append(_(CREATOR_MARK))
    if rated(lobby) and any(s.user is not None and s.rating.endswith("?") for s in lobby.seats):
        marks.append(_(PROVISIONAL_MARK))
    return ["<i>" + " · ".join(marks) + "</i>"] if marks else []


def render_lobby(
    lobby: LobbyLike, *, locale: str, bot_username: str | None = None
) -> tuple[str, InlineKeyboardMarkup]:
    """The lobby message: game, settings, seated players; Join, Leave, Add AI,
    Remove AI, Settings, Share, Start, Cancel."""
    _ = Translator(locale)
    creator = next((s.name for s in lobby.seats if s.user == lobby.creator and s.name), "")
    title = f"<b>{_(VARIANT_TITLES[lobby.variant])}</b>"
    if creator:  # who gathers the players, not the raw invite code (issue 13)
        title += " · " + _("gathered by {name}", name=user_text(creator))
    lines = [
        title,
        settings_line(lobby, _),
        "",
    ]
    lines += [_seat_line(i, s, lobby, _) for i, s in enumerate(lobby.seats)] or [
        _("No players yet.")
    ]
    lines += seat_legend(lobby, _)
    if bot_username:
        lines += ["", _("Invitation link: {url}", url=deep_link(bot_username, lobby.id))]
    code = lobby.id

    def b(text: str, op: LobbyOp) -> InlineKeyboardButton:
        return InlineKeyboardButton(text=text, callback_data=LobbyCb(code=code, op=op).pack())

    pairs = [
        [b("✋ " + _("Join"), LobbyOp.JOIN), b("🚪 " + _("Leave"), LobbyOp.LEAVE)],
        [b("🤖 " + _("Add AI"), LobbyOp.ADD_AI), b("➖ " + _("Remove AI"), LobbyOp.REMOVE_AI)],
        [
            b("⚙ " + _("Settings"), LobbyOp.SETTINGS),
            InlineKeyboardButton(text="📨 " + _("Share"), switch_inline_query=code),
        ],
        [b("▶ " + _("Start"), LobbyOp.START), b("✖ " + _("Cancel"), LobbyOp.CANCEL)],
    ]
    rows = [row for pair in pairs for row in fit_rows(pair, 2)]  # none cut (#29)
    return "\n".join(lines), InlineKeyboardMarkup(inline_keyboard=rows)


def settings_keyboard(lobby: LobbyLike, *, locale: str) -> InlineKeyboardMarkup:
    """Game; decks 2/4 and remove-one-joker (Shchelkovsky); turn timer ("no
    timer" only in a casual lobby: a rated game always has one, #38); the AI
    level (of the AI seats); max players; spectators; the current choices
    ticked.  A row whose options are bare values carries its mark on each (⏱ 30 s,
    🤖 hard, 👥 6), which the text above names (:data:`SETTINGS_LEGEND`); the
    ticked option shows ✓ instead, so no label grows past a phone's width (#29)."""
    _ = Translator(locale)
    code = lobby.id

    def b(text: str, arg: str, on: bool, mark: str = "") -> InlineKeyboardButton:
        data = LobbyCb(code=code, op=LobbyOp.SET, arg=arg).pack()
        prefix = "✓ " if on else (mark + " " if mark else "")
        return InlineKeyboardButton(text=prefix + text, callback_data=data)

    rows = [[b(_(title), f"game={v}", lobby.variant == v)] for v, title in VARIANT_TITLES.items()]
    if lobby.variant == "shchelkovsky":
        decks = lobby.options.get("decks", 2)
        rows.append([b(_("{n} decks", n=n), f"decks={n}", decks == n) for n in (2, 4)])
        removed = bool(lobby.options.get("remove_joker", True))
        rows.append([b(_("one joker removed"), "joker=1", removed)])
        rows.append([b(_("all jokers"), "joker=0", not removed)])
    timers = [
        b(_("{s} s", s=s) if s else _("no timer"), f"timer={s}", lobby.timer == s, TIMER_MARK)
        for s in TIMERS
        if s or not lobby.rated  # a rated game always has a turn timer (#38)
    ]
    rows += [timers[:2], timers[2:]] if len(timers) > 3 else [timers]
    level = LEVEL_OF.get(lobby.ai_kind, "normal")
    levels = [b(_(title), f"level={v}", level == v, AI_MARK) for v, title in LEVEL_TITLES.items()]
    rows += even_rows(levels, 3)  # «🤖 сложный» is cut in a row of three (#41)
    counts = [
        b(str(n), f"max={n}", lobby.max_seats == n, PLAYERS_MARK)
        for n in range(2, MAX_PLAYERS.get(lobby.variant, 6) + 1)
    ]
    rows += [counts[i : i + 5] for i in range(0, len(counts), 5)]
    watch = bool(getattr(lobby, "spectators", True))  # issue #16
    watching = [
        b(_("spectators"), "watch=1", watch, WATCH_MARK),
        b(_("no spectators"), "watch=0", not watch, "🙈"),
    ]
    rows += even_rows(watching, 2)  # «🙈 no spectat…» (#41)
    rows += even_rows(  # #25
        [
            b(_("rated"), "rated=1", lobby.rated, "🏆"),
            b(_("casual"), "rated=0", not lobby.rated, "🎲"),
        ],
        2,
    )
    back = LobbyCb(code=code, op=LobbyOp.BACK).pack()
    rows.append([InlineKeyboardButton(text="◀ " + _("Back"), callback_data=back)])
    return InlineKeyboardMarkup(inline_keyboard=rows)


TIMER_MARK, AI_MARK, PLAYERS_MARK, WATCH_MARK = "⏱", "🤖", "👥", "👀"
SETTINGS_LEGEND = N_("⏱ turn timer · 🤖 level of the AI players · 👥 players at most")
"""Names the rows of bare values of the settings keyboard (#29)."""
RATED_TIMER_NOTE = N_("A rated game always has a turn timer: “no timer” is for casual games.")
"""Why a rated lobby's keyboard offers no "no timer" (#38)."""


def settings_text(lobby: LobbyLike, *, locale: str) -> str:
    _ = Translator(locale)
    return "\n".join(
        [
            bold(_("Settings")) + " · " + _(VARIANT_TITLES[lobby.variant]),
            settings_line(lobby, _),
            "",
            _(SETTINGS_LEGEND),
            *([_(RATED_TIMER_NOTE)] if lobby.rated else []),  # #38
        ]
    )


def render_invite(
    lobby: LobbyLike, *, locale: str, bot_username: str
) -> tuple[str, InlineKeyboardMarkup]:
    """The invitation card posted through inline mode, with a Join deep link."""
    _ = Translator(locale)
    text = "\n".join(
        [
            "🃏 " + _(GAME_INVITES[lobby.variant]),
            settings_line(lobby, _),
        ]
    )
    button = InlineKeyboardButton(text="✋ " + _("Join"), url=deep_link(bot_username, lobby.id))
    return text, InlineKeyboardMarkup(inline_keyboard=[[button]])


# ------------------------------------------------------------------ stats
@dataclass(frozen=True)
class VariantStats:
    """One player's results in one game."""

    variant: str
    games: int = 0
    losses: int = 0
    draws: int = 0
    places: dict[int, int] = field(default_factory=dict)  # finish place -> count


def stats_from_counts(counts: Mapping[str, str | int]) -> list[VariantStats]:
    """From the service's stats hash (``<variant>:games|losses|draws|p<place>``)."""
    per: dict[str, dict[str, int]] = {}
    for key, value in counts.items():
        variant, _sep, what = str(key).partition(":")
        if variant in VARIANT_TITLES and what:
            try:
                per.setdefault(variant, {})[what] = int(value)
            except ValueError:
                continue
    out = []
    for variant in VARIANT_TITLES:
        d = per.get(variant)
        if not d:
            continue
        places = {int(k[1:]): v for k, v in d.items() if k[:1] == "p" and k[1:].isdigit()}
        out.append(
            VariantStats(variant, d.get("games", 0), d.get("losses", 0), d.get("draws", 0), places)
        )
    return out


def render_stats(name: str, stats: Sequence[VariantStats], *, locale: str) -> str:
    """/stats: games, losses, draws and first places per game."""
    _ = Translator(locale)
    lines = [bold(_("Statistics")) + " · " + user_text(name)]
    if not any(s.games for s in stats):
        return "\n".join([*lines, _("No games played yet: /new or /play.")])
    for s in stats:
        if not s.games:
            continue
        lines += [
            "",
            f"<b>{_(VARIANT_TITLES[s.variant])}</b>",
            _(
                "games: {games} · lost: {losses} · draws: {draws} · first place: {first}",
                games=s.games,
                losses=s.losses,
                draws=s.draws,
                first=s.places.get(1, 0),
            ),
        ]
    return "\n".join(lines)


def lobby_lang(snap: Snapshot, chat: int) -> str:
    """The language of the table's lobby message in ``chat``."""
    if chat < 0:
        return snap.ui.group_lang or "en"
    return snap.ui.langs.get(chat, "en")


def lobby_screen(snap: Snapshot, chat: int, bot_username: str) -> Screen:
    """The lobby message in ``chat`` (or that the lobby was cancelled)."""
    lang = lobby_lang(snap, chat)
    if snap.table.status == CANCELLED:
        return Translator(lang)(texts.LOBBY_CANCELLED), None
    return render_lobby(snap.table, locale=lang, bot_username=bot_username)


def started_lobby_screen(snap: Snapshot, chat: int, bot_username: str) -> Screen:
    """The lobby message in ``chat`` once its game started, without buttons: in a
    group it points to the table message just below it, whose *My cards* and
    *Private chat* are the only ones (one row of them in the group, #29); once
    the game is over, to the result below (#41)."""
    t = snap.table
    _ = Translator(lobby_lang(snap, chat))
    head = f"<b>{_(VARIANT_TITLES[t.variant])}</b> · " + ", ".join(
        user_text(s.name if s.human else ai_name(s.name, _) + level_suffix(s, _)) for s in t.seats
    )
    state = snap.loaded.state
    if t.status == OVER or (state is not None and state.over):
        # #41: the result below is what it is about now, not the start
        return head + "\n🏁 " + _(texts.GAME_OVER_BELOW), None
    if chat < 0:
        return head + "\n" + _(texts.GAME_STARTED), None
    return head + "\n" + _(texts.GAME_STARTED_PRIVATE), None


# ------------------------------------------------------------------ ratings (#25)
def _rating_label(rating: int, provisional: bool) -> str:
    return f"{rating}?" if provisional else str(rating)


def render_rating_top(
    boards: Mapping[str, Sequence[BoardRow]], *, locale: str, limit: int = 10
) -> str:
    """/top in a group: its players by rating, per game; the provisional ones
    (marked ?, too few games to be sure) listed apart, after the others."""
    _ = Translator(locale)
    lines = [bold(_("Leaderboard"))]
    if not any(boards.values()):
        why = _(  # #41: a new group's players are all new, for days: say why
            "A new player's games count once they have played a few games with other "
            "people over a couple of days."
        )
        return "\n".join([*lines, _("No rated games in this chat yet: /new"), why])
    for variant, rows in boards.items():
        if not rows:
            continue
        lines += ["", f"<b>{_(VARIANT_TITLES[variant])}</b>"]
        settled = [r for r in rows if not r.provisional]
        for i, r in enumerate(settled[:limit], start=1):
            medal = {1: "🥇", 2: "🥈", 3: "🥉"}.get(i, f"{i}.")
            lines.append(
                f"{medal} {user_text(r.name)} — {r.rating} · " + _("games: {n}", n=r.games)
            )
        new = [r for r in rows if r.provisional][:limit]
        if new:
            names = ", ".join(f"{user_text(r.name)} {_rating_label(r.rating, True)}" for r in new)
            lines.append(_("New players (rating not settled yet): {names}", names=names))
    lines += ["", _(RATING_LEGEND)]
    return "\n".join(lines)


RATING_LEGEND = N_(
    "Your rating grows when you go out ahead of strong players; «?» means there are too "
    "few games yet to be sure of it. Only rated games without AI players count."
)


def render_ratings(me: PlayerRatings, name: str, *, locale: str, now_ms: int) -> str:
    """/rating: his rating in each game, his reliability, his cooldown if any."""
    _ = Translator(locale)
    lines = [bold(_("Ratings")) + " · " + user_text(name), ""]
    for variant in VARIANT_TITLES:
        r = me.ratings.get(variant)
        title = f"<b>{_(VARIANT_TITLES[variant])}</b>"
        if r is None or not r.games:
            lines.append(title + ": " + _("no rated games yet"))
            continue
        line = title + f": {r.label} · " + _("games: {n}", n=r.games)
        if r.provisional:
            line += " · " + _("not settled yet")
        lines.append(line)
    lines.append("")
    if me.reliability is None:  # #41: a game against the AI alone is not counted
        lines.append(_("Reliability: no game with other people finished yet"))
    else:
        lines.append(
            _(
                # #41: «of your last 1 games» / «из последних 1»: no noun follows the number
                "Reliability: {pct}% — the share of recent games you played to the end (games counted: {n})",
                pct=round(me.reliability * 100),
                n=me.recent,
            )
        )
    if me.cooldown_until is not None and me.cooldown_until > now_ms:
        left = duration((me.cooldown_until - now_ms + 999) // 1000, _)
        lines += ["", "⏳ " + _(texts.COOLDOWN_MINE, time=left)]
    lines += ["", _(RATING_LEGEND)]
    return "\n".join(lines)
