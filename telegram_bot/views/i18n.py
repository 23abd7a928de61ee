"""Russian, Ukrainian and English through aiogram's i18n (gettext catalogs).

Catalogs: ``telegram_bot/locales/{ru,uk,en}/LC_MESSAGES/messages.po``; msgids are
the English texts (``en`` keeps empty msgstrs).  The ``.mo`` files are built, never
committed: ``bash .ci/dev`` runs ``pybabel compile -d telegram_bot/locales -D
messages`` on every run, and :func:`load_i18n` refuses to start without them.

Marking texts: ``_ = Translator(locale)`` then ``_("Take")`` or
``_("{name} takes", name=...)``; :func:`N_` marks a text to translate later.
Updating the catalogs after changing texts::

    pybabel extract -k _ -k N_ -o /tmp/messages.pot telegram_bot
    pybabel update -i /tmp/messages.pot -d telegram_bot/locales -D messages

Render functions take the locale explicitly (a message goes to several players,
each in his own language); handlers may also use aiogram's ``I18nMiddleware``
with the object from :func:`get_i18n`.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from aiogram.types import BotCommand
from aiogram.utils.i18n import I18n

LOCALES_DIR = Path(__file__).parents[1] / "locales"
DOMAIN = "messages"
LANGUAGES: tuple[str, ...] = ("ru", "uk", "en")
DEFAULT_LANGUAGE = "en"
_ALIASES = {"be": "ru", "kk": "ru", "ky": "ru", "tg": "ru", "uz": "ru", "rue": "uk"}
COMPILE_HINT = (
    "compile the translations first: `pybabel compile -d telegram_bot/locales -D messages` "
    "(`bash .ci/dev run` and `bash .ci/dev test` do it for you)"
)


def N_(message: str) -> str:
    """Mark ``message`` for the catalogs without translating it now."""
    return message


class CatalogError(RuntimeError):
    """The compiled catalogs are missing: the bot cannot speak."""


def load_i18n(path: Path = LOCALES_DIR) -> I18n:
    """aiogram's :class:`I18n` over ``path``; :class:`CatalogError` with a hint when
    a language's ``.mo`` file has not been compiled."""
    missing = [
        lang for lang in LANGUAGES if not (path / lang / "LC_MESSAGES" / f"{DOMAIN}.mo").is_file()
    ]
    if missing:
        raise CatalogError(
            f"no compiled catalog for {', '.join(missing)} in {path}: {COMPILE_HINT}"
        )
    return I18n(path=path, default_locale=DEFAULT_LANGUAGE, domain=DOMAIN)


@cache
def get_i18n() -> I18n:
    """The process-wide :class:`I18n` (loaded once)."""
    return load_i18n()


def pick_language(code: str | None) -> str:
    """Our language for Telegram's ``language_code`` (``ru``, ``uk-UA``, ``pt-br``
    ...): ru/uk/en; ``be``/``kk`` and other neighbours read Russian; anything else
    gets English."""
    if not code:
        return DEFAULT_LANGUAGE
    base = code.replace("_", "-").split("-")[0].lower()
    if base in LANGUAGES:
        return base
    return _ALIASES.get(base, DEFAULT_LANGUAGE)


def gettext(message: str, locale: str) -> str:
    return get_i18n().gettext(message, locale=locale)


class Translator:
    """Texts in one language: ``_("{name} takes", name=n)``."""

    __slots__ = ("locale",)

    def __init__(self, locale: str) -> None:
        self.locale = locale if locale in LANGUAGES else DEFAULT_LANGUAGE

    def __call__(self, message: str, /, **params: object) -> str:
        text = gettext(message, self.locale)
        return text.format(**params) if params else text


def duration(seconds: int, _: Translator) -> str:
    """A wait in words, rounded up to the minute: «10 min», «1 h 30 min», «72 h»."""
    minutes = max(1, -(-seconds // 60))
    if minutes < 60:
        return _("{m} min", m=minutes)
    h, m = divmod(minutes, 60)
    return _("{h} h {m} min", h=h, m=m) if m else _("{h} h", h=h)


# ------------------------------------------------------------------ bot commands
COMMANDS: tuple[tuple[str, str], ...] = (
    ("start", N_("Start the bot (or open an invitation)")),
    ("new", N_("New lobby: /new chuvash or /new shchelkovsky")),
    ("play", N_("Play against AI players right now")),
    ("rules", N_("Rules of both games")),
    ("stats", N_("Your statistics")),
    ("top", N_("This chat's leaderboard")),
    ("rating", N_("Your ratings and reliability")),
    ("arena", N_("A tournament in this group")),
    ("replay", N_("Replay one of your last games")),
    ("leave", N_("Leave the game (the AI takes your seat)")),
    ("lang", N_("Change the language")),
    ("help", N_("How to play here")),
)
"""The command menu, as data for ``setMyCommands`` (one call per language)."""


GROUP_COMMANDS = ("new", "rules", "stats", "top", "rating", "arena", "lang", "leave", "help")
"""The group menu: the commands that work there."""
PRIVATE_COMMANDS = tuple(name for name, _text in COMMANDS if name not in ("top", "arena"))
"""The private menu: /top (a chat's leaderboard) and /arena (a group's tournament)
answer only in a group, so they are left out here (issue 13); /replay answers
only here."""


def bot_commands(locale: str, only: tuple[str, ...] | None = None) -> list[BotCommand]:
    """The menu in ``locale``: every command, or those named in ``only``."""
    _ = Translator(locale)
    return [
        BotCommand(command=name, description=_(text))
        for name, text in COMMANDS
        if only is None or name in only
    ]


# ------------------------------------------------------------------ /rules, /help
VARIANT_TITLES: dict[str, str] = {
    "chuvash": N_("Chuvash Rooster"),
    "shchelkovsky": N_("Durak Shchelkovsky"),
}
LEVEL_TITLES: dict[str, str] = {
    "easy": N_("easy"),
    "normal": N_("normal"),
    "hard": N_("hard"),
    "expert": N_("expert"),
}
"""The AI levels (``engine.ai.LEVELS``), as shown next to an AI's name."""
VARIANT_SHORT: dict[str, str] = {
    "chuvash": N_("Chuvash"),
    "shchelkovsky": N_("Shchelkovsky"),
}
"""A game's name where a button has room for a word (#41: /play's «▶ Again:
Chuvash · hard»)."""
GAME_INVITES: dict[str, str] = {
    # the game's name in the case the sentence needs (ru/uk: «Сыграем в „Дурака…“»)
    "chuvash": N_("Join me for a game of <b>Chuvash Rooster</b>!"),
    "shchelkovsky": N_("Join me for a game of <b>Durak Shchelkovsky</b>!"),
}
INVITE_TITLES: dict[str, str] = {
    "chuvash": N_("Invite to Chuvash Rooster"),
    "shchelkovsky": N_("Invite to Durak Shchelkovsky"),
}
LOSER_TITLES: dict[str, str] = {
    "chuvash": N_("the Chuvash Rooster"),
    "shchelkovsky": N_("the durak"),
}

RULES: dict[str, str] = {
    # C1-C14 of docs/RULES.md
    "chuvash": N_(
        "<b>Chuvash Rooster</b>: 2–6 players, 36 cards (six to ace), no trump.\n"
        "• Everyone gets 6 cards; after each bout all draw back up to 6 while the stock "
        "lasts, the first attacker first, then clockwise.\n"
        "• Suits rank ♠ over ♥ over ♦ over ♣. A card beats a lower card of its own suit, "
        "or a card of a lower suit whose rank is equal or lower: K♦ beats 8♣, 9♠ beats 6♦, "
        "10♠ beats 8♣ but not A♣. A♠ beats everything, 6♣ beats nothing.\n"
        "• First game: the holder of 6♣ leads (if nobody has it: 6♦, 6♥, 6♠, 7♣ and so "
        "on). Later games: the player before the last loser leads, so the loser defends "
        "first.\n"
        "• You always attack the next player clockwise: lead one or more cards of one "
        "suit, at most as many as he holds.\n"
        "• The defender covers the cards one at a time, in any order, or takes. If he "
        "takes before covering anything, nobody may throw in: he takes the led cards at "
        "once.\n"
        "• After his first cover the others may throw in cards of ranks already on the "
        "table (the first attacker first, then clockwise); uncovered cards may never "
        "outnumber the defender's cards. He may still take later: then the others may "
        "throw in more and he takes the whole table.\n"
        "• All covered and nobody throws in: the cards are discarded («бито») and the "
        "defender leads next. Taken: the player after the defender leads.\n"
        "• When the stock is empty, a player without cards is out. The last player "
        "holding cards is the Chuvash Rooster."
    ),
    # S1-S14 of docs/RULES.md
    "shchelkovsky": N_(
        "<b>Durak Shchelkovsky</b>: 2–10 players, 2 or 4 decks of 52 cards with 2 jokers "
        "each (one joker may be removed so that the game cannot end in a draw), ranks 2 "
        "to ace.\n"
        "• Everyone gets 6 cards. The top card of the stock is shown and put at the "
        "bottom: its suit is trump (a joker goes back into the stock and the next card "
        "is shown). After each bout all draw up to 6, the defender last.\n"
        "• A card beats a lower card of its suit; any trump beats any other suit. A joker "
        "beats any card except a 2 and is beaten only by a 2 or another joker; it has no "
        "suit.\n"
        "• First game: the holder of the lowest trump leads. Later games: the player "
        "before the last loser leads.\n"
        "• The lead is exactly one card (a joker too), at the next player clockwise.\n"
        "• Before covering anything the defender may transfer: add a card of the same "
        "rank and pass all the cards on to the next player, who must hold at least as "
        "many cards. Or he may show a pass-ticket: the trump of that rank, shown but "
        "kept; the attack goes back to the player who passed it, who must cover or take "
        "and may also throw cards of that rank at himself.\n"
        "• Throw-ins open once the defender covers a card or takes: ranks already on the "
        "table, at most 10 thrown-in cards per bout, never more uncovered cards than the "
        "defender holds; the first attacker throws first, then the others clockwise. The "
        "defender may take at any time; the others may still throw in, and he takes "
        "everything.\n"
        "• Beaten off: the defender leads next. Taken: the player after him leads.\n"
        "• When the stock is empty, a player without cards is out. The last player "
        "holding cards is the durak."
    ),
}

HELP = N_(
    "Play <b>Chuvash Rooster</b> or <b>Durak Shchelkovsky</b> with friends or AI players.\n"
    "• /play: a game against AI players, the game and their level in one tap; /new gives "
    "an invitation link for your friends.\n"
    "• In a group, /new opens a lobby: press Join, then Start. Under the group's table, "
    "🎴 My cards shows your hand right in the group, to you alone; 🔒 Private chat "
    "brings it here. /top there is the group's leaderboard, /arena its tournament.\n"
    "• /leave leaves your lobby or game (in a game, the AI plays your seat).\n"
    "• /stats, /rating (your ratings and reliability), /replay (your last games), /rules, "
    "/lang."
)
"""/help in the private chat: every command of its menu (#41), and /top and
/arena, which work in a group."""

HELP_GROUP = N_(
    "Play <b>Chuvash Rooster</b> or <b>Durak Shchelkovsky</b> here, with friends or AI "
    "players.\n"
    "• /new opens a lobby: press Join, then Start.\n"
    "• Under the table, 🎴 My cards shows your hand right here, to you alone; 🔒 "
    "Private chat opens it in your private chat with me.\n"
    "• /leave leaves your lobby or game (in a game, the AI plays your seat).\n"
    "• /arena: a tournament in this group for a set time (an admin starts it).\n"
    "• /top (this group's leaderboard), /rating (your ratings and reliability), /stats, "
    "/rules, /lang."
)
"""/help in a group: every command of its menu (#41; /replay and /play live in
the private chat)."""


RULES_SUMMARY = N_(
    "<b>Two games</b>: Chuvash Rooster (36 cards, no trump; whoever keeps cards last is "
    "the rooster) and Durak Shchelkovsky (2 or 4 decks with jokers, a trump, transfers "
    "and pass-tickets; whoever keeps cards last is the durak). The full rules are below: "
    "tap a game's rules to open them."
)


def rules_text(variant: str, locale: str) -> str:
    """The full rules of one game (HTML)."""
    return Translator(locale)(RULES[variant])


HELP_LEVELS = N_(
    "• AI levels: easy, normal, hard or expert, on the buttons of /play (or typed: /play "
    "shchelkovsky hard); in a lobby, under ⚙ Settings."
)
HELP_LEVELS_GROUP = N_("• AI levels: easy, normal, hard or expert, in a lobby under ⚙ Settings.")
"""The AI levels in a group's /help: /play is the private chat's (#41)."""
HELP_MOVES = N_(
    "• Cards marked • can be played now; greyed ones cannot. Chuvash Rooster: tap the "
    "cards of your lead (✓), then ▶ Play; a card that can only be led alone is played at "
    "once.\n"
    "• A player with nothing to throw in passes automatically; ⏭ passes for the rest of "
    "the bout.\n"
    "• Durak Shchelkovsky: ↪ 9♦ transfers the attack with that card; 🎫 9♦ shows that "
    "trump as your pass-ticket."
)
"""How moves are made, added to /help (issue 13; one-tap leads: #24)."""


def rules_message(locale: str, variant: str | None = None) -> str:
    """``/rules``: one message -- a short summary, then each game's full rules in
    an expandable block quote (closed until tapped; issue 13); ``/rules <game>``:
    that game's rules alone, open."""
    if variant is not None:
        return rules_text(variant, locale)
    quotes = [f"<blockquote expandable>{rules_text(v, locale)}</blockquote>" for v in RULES]
    return "\n".join([Translator(locale)(RULES_SUMMARY), *quotes])


def help_text(locale: str, *, group: bool = False) -> str:
    """/help: for the private chat, or (``group``) for a group -- each names
    only the commands that work there (issue 13)."""
    _ = Translator(locale)
    levels = HELP_LEVELS_GROUP if group else HELP_LEVELS
    return _(HELP_GROUP if group else HELP) + "\n" + _(HELP_MOVES) + "\n" + _(levels)
