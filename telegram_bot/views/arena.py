"""What an arena shows (#27), pure: the admin's set-up message, the arena's own
message in the group (its settings, its time, the standings, *Join* and
*Withdraw*) and the podium at its end.  Times go out as Telegram's
``date_time`` entities: each reader sees them in his own time zone."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from aiogram.types import InlineKeyboardButton, InlineKeyboardMarkup

from tables.arena_rules import CANCELLED, FINISHED, FIRE_AFTER, RUNNING, SCHEDULED, Arena
from telegram_bot.buttons.callbacks import ArenaCb, ArenaOp, ArenaSetupCb
from telegram_bot.views.format import bold, user_text
from telegram_bot.views.i18n import N_, VARIANT_TITLES, Translator
from telegram_bot.views.keyboards import even_rows

SHOWN = 15
"""Standings rows the arena's message shows (the rest: «… and N more»)."""
SEATS_CHOICES = (2, 3, 4)
MINUTES_CHOICES = (30, 45, 60, 90)
START_CHOICES = (0, 5, 15, 30)
"""The set-up's choices: players a table, length (minutes), start (minutes from now)."""
MEDALS = ("🥇", "🥈", "🥉")

ARENA_HELP = N_(
    "An arena is a tournament in this group: for a set time the bot seats its players "
    "at tables again and again. Going out first scores 2, going out later 1, the loser 0; "
    "after two wins in a row the points are doubled. A group admin starts one with /arena."
)
ARENA_ABOUT = N_(
    "An arena is a tournament in this group: for a set time the bot seats its players "
    "at tables again and again. Going out first scores 2, going out later 1, the loser 0; "
    "after two wins in a row the points are doubled."
)
""":data:`ARENA_HELP` without who starts one: the set-up, to the admin who does (#41)."""
LEFT_BUSY = N_(
    "The arena had a table for you, but you were playing at another one, so you have "
    "left the arena. Your points stay: press Join on its message when you are free."
)
LEFT_COOLDOWN = N_(
    "The arena had a table for you, but you may not play rated games yet (you left "
    "some unfinished), so you have left the arena. Your points stay."
)
"""Told to a player the arena withdrew because he could not sit (#27)."""
SEATS_LABEL = N_("{n} seats")
"""A choice of players per table (2, 3 or 4 only: ru «{n} места», uk «{n} місця»)."""
ONLY_ADMINS = N_("Only the group's admins can start an arena.")
ONLY_ADMINS_CANCEL = N_("Only the group's admins can cancel the arena.")
CANCEL = N_("Cancel the arena")
CANCELLED_NOW = N_(
    "The arena is cancelled: nobody is seated any more, and the games being played "
    "finish without scoring in it."
)
OVER_ALREADY = N_("This arena is over already.")
TOLD_REMOVED = N_(
    "The bot was removed from the group “{group}”: its arena was cancelled and its games "
    "there ended without a result. No rating change and no penalty for anybody."
)
TOLD_UPGRADED = N_(
    "The group “{group}” became a supergroup: its arena was cancelled and its games there "
    "ended without a result. No rating change and no penalty for anybody."
)
TOLD_FORFEITED = N_(
    "You removed the bot from the group “{group}” during your rated game there: the game "
    "counts as lost by you (ranked last), and as walking away from a rated game."
)
TOLD_FORFEIT_COUNTS = N_(
    "{name} removed the bot from the group “{group}” during your rated game there, so "
    "{name} forfeits it: the game counts, with {name} ranked last."
)
UPGRADED_HERE = N_(
    "This group became a supergroup: its arena was cancelled and its games ended without "
    "a result (no rating change, no penalty). Start again with /new or /arena."
)
"""When the bot lost a group (#38): to each player in private, and in the new
supergroup."""
ONLY_GROUPS = N_("Arenas are played in groups: add me to one and send /arena there.")
NOBODY_YET = N_("Nobody has joined yet.")
NOBODY_THEN = N_("Nobody had joined by then.")
AS_OF = N_("As of {time}; the arena's message in the group stays up to date.")
LIVE_STANDINGS = N_("Live standings")
IN_THIS_MESSAGE = N_("The arena's standings are in this message, kept up to date.")
"""#41: ``/arena`` of a member while the arena is on -- a copy of the standings
says when it was true (``AS_OF``) and links to the arena's message (``LIVE_STANDINGS``);
in the group, a short reply to that message (``IN_THIS_MESSAGE``)."""


@dataclass(frozen=True)
class Setup:
    """The admin's choices on the set-up message."""

    variant: str = "chuvash"
    seats: int = 2
    minutes: int = 45
    start: int = 0  # minutes from now

    def button(self, op: str = "set", **change: object) -> str:
        values = {
            "variant": self.variant,
            "seats": self.seats,
            "minutes": self.minutes,
            "start": self.start,
        }
        values.update(change)
        v = "c" if values["variant"] == "chuvash" else "s"
        return ArenaSetupCb(
            v=v,  # type: ignore[arg-type]
            n=int(str(values["seats"])),
            m=int(str(values["minutes"])),
            s=int(str(values["start"])),
            op=op,  # type: ignore[arg-type]
        ).pack()

    @classmethod
    def of(cls, cb: ArenaSetupCb) -> Setup:
        return cls("chuvash" if cb.v == "c" else "shchelkovsky", cb.n, cb.m, cb.s)


def _mark(chosen: bool, label: str) -> str:
    return f"✓ {label}" if chosen else label


def setup_screen(setup: Setup, _: Translator) -> tuple[str, InlineKeyboardMarkup]:
    """The set-up message: the choices so far and *Announce*."""
    title = _(VARIANT_TITLES[setup.variant])
    lines = [
        "🏟 " + bold(_("A new arena")),
        "",
        _("Game: {game}", game=title),
        _("Players per table: {n}", n=setup.seats),
        _("Length: {m} min", m=setup.minutes),
        _("Start: now") if not setup.start else _("Start: in {m} min", m=setup.start),
        "",
        _(ARENA_ABOUT),
    ]
    games = [
        InlineKeyboardButton(
            text=_mark(setup.variant == v, _(VARIANT_TITLES[v])),
            callback_data=setup.button(variant=v),
        )
        for v in ("chuvash", "shchelkovsky")
    ]
    seats = [
        InlineKeyboardButton(
            text=_mark(setup.seats == n, _(SEATS_LABEL, n=n)),
            callback_data=setup.button(seats=n),
        )
        for n in SEATS_CHOICES
    ]
    length = [
        InlineKeyboardButton(
            text=_mark(setup.minutes == m, _("{m} min", m=m)),
            callback_data=setup.button(minutes=m),
        )
        for m in MINUTES_CHOICES
    ]
    start = [
        InlineKeyboardButton(
            text=_mark(setup.start == s, _("now") if not s else _("+{m} min", m=s)),
            callback_data=setup.button(start=s),
        )
        for s in START_CHOICES
    ]
    go = [InlineKeyboardButton(text="📣 " + _("Announce"), callback_data=setup.button("go"))]
    rows = [[g] for g in games]  # a game's name takes a row: «✓ Durak Shchelkovsky»
    # «✓ 30 min» in a row of four is cut (#41): two rows of two then
    choices = [row for choice in (seats, length, start) for row in even_rows(choice, 4)]
    markup = InlineKeyboardMarkup(inline_keyboard=[*rows, *choices, go])
    return "\n".join(lines), markup


def at(ms: int, style: str) -> str:
    """A moment as a ``date_time`` entity (``style``: ``t`` a time, ``r`` relative);
    the text inside is for clients that do not know the entity."""
    moment = datetime.fromtimestamp(ms / 1000, UTC)
    return f'<tg-time unix="{ms // 1000}" format="{style}">{moment:%H:%M} UTC</tg-time>'


FIRE_LEGEND = N_("🔥 — two wins in a row: points now count double")
"""#41: the standings' 🔥 said nothing to a player who had not read the announcement."""


def standings_lines(
    arena: Arena, _: Translator, shown: int = SHOWN, nobody: str = NOBODY_YET
) -> list[str]:
    rows = arena.standings()
    if not rows:
        return [_(nobody)]
    lines = []
    for rank, p in enumerate(rows[:shown], start=1):
        fire = " 🔥" if p.streak >= FIRE_AFTER else ""
        away = " · " + _("withdrew") if p.withdrawn else ""
        lines.append(
            _(
                "{rank}. {name} — {points}{fire} (games: {games}){away}",
                rank=rank,
                name=user_text(p.name),
                points=bold(str(p.score)),
                fire=fire,
                games=p.games,
                away=away,
            )
        )
    if len(rows) > shown:
        lines.append(_("… and {n} more", n=len(rows) - shown))
    if any(p.streak >= FIRE_AFTER for p in rows[:shown]):
        lines.append(_(FIRE_LEGEND))
    return lines


def board_lines(arena: Arena, _: Translator, now_ms: int, nobody: str = NOBODY_YET) -> list[str]:
    """What the arena's message says above its buttons: its title, settings,
    time, counts and standings (``nobody``: the line when nobody has joined)."""
    title = _(VARIANT_TITLES.get(arena.variant, arena.variant))
    lines = [
        "🏟 " + bold(_("Arena · {game}", game=title)),
        _(
            "{n} per table · {m} min · {s} s per move",
            n=arena.seats,
            m=arena.minutes,
            s=arena.timer,
        ),
    ]
    if arena.status == SCHEDULED:
        lines.append("⏳ " + _("Starts at {time}", time=at(arena.starts, "t")))
    elif arena.status == RUNNING and now_ms < arena.ends:
        lines.append("▶ " + _("Ends {time}", time=at(arena.ends, "r")))
    elif arena.status == RUNNING:
        lines.append("⌛ " + _("Time is up: the last games are being finished."))
    elif arena.status == FINISHED:
        lines.append("🏁 " + _("The arena is over."))
    elif arena.status == CANCELLED:
        lines.append("✖ " + _("The arena was cancelled."))
    lines.append(
        _(
            "Players: {players} · tables playing: {tables} · games: {games}",
            players=len(arena.players),
            tables=len(arena.playing),
            games=arena.games,
        )
    )
    return [*lines, "", *standings_lines(arena, _, nobody=nobody)]


def arena_screen(
    arena: Arena, _: Translator, now_ms: int
) -> tuple[str, InlineKeyboardMarkup | None]:
    """The arena's message in the group."""
    lines = board_lines(arena, _, now_ms)
    if arena.over or (arena.status == RUNNING and now_ms >= arena.ends):
        return "\n".join(lines), None
    lines += ["", _("Join, and the bot seats you at a table as soon as players are free.")]
    buttons = [
        InlineKeyboardButton(
            text="✋ " + _("Join"),
            callback_data=ArenaCb(arena=arena.id, op=ArenaOp.JOIN).pack(),
        ),
        InlineKeyboardButton(
            text="🚪 " + _("Withdraw"),
            callback_data=ArenaCb(arena=arena.id, op=ArenaOp.LEAVE).pack(),
        ),
    ]
    markup = InlineKeyboardMarkup(inline_keyboard=even_rows(buttons, 2))  # «✋ Присоедин…»
    return "\n".join(lines), markup


SUPERGROUP_BASE = 10**12
"""A supergroup's chat id is ``-(10**12 + its own id)`` (printed: ``-100<id>``)."""


def message_link(chat: int, message: int) -> str | None:
    """A link that opens ``message`` of ``chat``: a supergroup's
    (``t.me/c/<its own id>/<message>``); Telegram has none for a message of a
    basic group."""
    if chat >= -SUPERGROUP_BASE:
        return None
    return f"https://t.me/c/{-chat - SUPERGROUP_BASE}/{message}"


def standings_screen(
    arena: Arena, _: Translator, now_ms: int, live: str | None = None
) -> tuple[str, InlineKeyboardMarkup | None]:
    """The standings as a message of their own (``/arena`` while one is on):
    #41 -- a member's copy said «Nobody has joined yet.» long after people
    joined -- so it says when it was true, that the arena's message stays up to
    date, and links to it (``live``, :func:`message_link`) where Telegram can."""
    lines = board_lines(arena, _, now_ms, nobody=NOBODY_THEN)
    lines.insert(1, "🕒 " + _(AS_OF, time=at(now_ms, "t")))
    if live is None:
        return "\n".join(lines), None
    button = InlineKeyboardButton(text="🏟 " + _(LIVE_STANDINGS), url=live)
    return "\n".join(lines), InlineKeyboardMarkup(inline_keyboard=[[button]])


def cancel_markup(arena: Arena, _: Translator) -> InlineKeyboardMarkup | None:
    """Under the standings an admin asked for (``/arena``): *Cancel the arena*
    (#38; anybody may press it, only the group's admins are obeyed)."""
    if arena.over:
        return None
    data = ArenaCb(arena=arena.id, op=ArenaOp.CANCEL).pack()
    return InlineKeyboardMarkup(
        inline_keyboard=[[InlineKeyboardButton(text="✖ " + _(CANCEL), callback_data=data)]]
    )


def podium_screen(arena: Arena, _: Translator) -> str:
    """The message at the arena's end: the three best, the totals."""
    title = _(VARIANT_TITLES.get(arena.variant, arena.variant))
    lines = ["🏁 " + bold(_("The arena is over · {game}", game=title)), ""]
    rows = [p for p in arena.standings() if p.games]
    if not rows:
        lines.append(_("Nobody played a game."))
    for medal, p in zip(MEDALS, rows, strict=False):
        lines.append(
            _("{medal} {name} — {points}", medal=medal, name=user_text(p.name), points=p.score)
        )
    lines += [
        "",
        _("Games: {games} · players: {players}", games=arena.games, players=len(arena.players)),
    ]
    return "\n".join(lines)
