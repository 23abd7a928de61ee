"""Texts of the handlers that are not part of a rendered message: refusals of the
table service and the engine in words, short answers, greetings."""

from __future__ import annotations

from engine.errors import EngineError
from telegram_bot.buttons import moves
from telegram_bot.views.i18n import N_, VARIANT_TITLES, Translator, duration

REFUSALS: dict[str, str] = {
    # tables.LiveError codes
    "no_table": N_("This game no longer exists (finished or expired)."),
    "not_open": N_("This lobby is closed: the game has started, ended or was cancelled."),
    "no_game": N_("No game is in progress here."),
    # #41: a stale button of an ended game says what he can do now
    "game_over": N_(
        "This game is over. 🔁 Rematch under its result plays again; /play or /new starts "
        "a new game."
    ),
    "lobby_full": N_("The lobby is full."),
    "not_seated": N_("You do not play at this table."),
    "seated_elsewhere": N_("You are already at another table: leave it first (/leave)."),
    "not_allowed": N_("You cannot do that now."),
    "too_few_players": N_("At least two players are needed: add an AI player."),
    "bad_seat": N_("That seat cannot be changed."),
    "ai_controlled": N_("The AI plays your seat now: take your seat back first."),
    "stale_version": N_("The table has changed: here is the current position."),
    "busy": N_("The table is busy right now: try again."),
    "bad_settings": N_("These settings are not possible."),
    "bad_request_id": N_("Something went wrong: try again."),
    "not_owner": N_("Only the lobby's creator can do that."),
    "bad_button": N_("This button is not valid."),
    "unavailable": N_("The game is unavailable for a moment: please try again in a few seconds."),
    # arenas (#27)
    "arena_running": N_("This group already has an arena: it has to end first."),
    "arena_over": N_("This arena is over."),
    "arena_full": N_("This arena is full: it takes no more players."),  # #38
    "no_arena": N_("This arena is gone."),
    # engine.IllegalAction codes
    "not_your_turn": N_("It is not your move now."),
    "card_not_in_hand": N_("You do not hold that card."),
    "does_not_beat": N_("That card does not beat it."),
    "throw_in_closed": N_("Throw-ins are closed now."),
    "rank_not_on_table": N_("You may throw in only ranks already on the table."),
    "not_your_priority": N_("Wait: another player throws in first."),
    "throw_in_cap": N_("No more cards may be thrown in this bout."),
    "hand_limit": N_("The defender cannot cover that many cards."),
    "must_defend": N_("You must cover or take."),
}
NOT_OWNER: dict[str, str] = {
    # tables.OWNER_ONLY: a not_owner refusal's info["action"]
    "start": N_("Only the lobby's creator can start the game."),
    "add_ai": N_("Only the lobby's creator can add AI players."),
    "remove_ai": N_("Only the lobby's creator can remove AI players."),
    "settings": N_("Only the lobby's creator can change the settings."),
    "cancel": N_("Only the lobby's creator can cancel the lobby."),
}
NOT_ALLOWED: dict[str, str] = {
    # a not_allowed refusal's info["action"] (tables.games)
    "rematch": N_("A rematch is possible once the game is over."),
    "arena_rematch": N_("An arena's game has no rematch: the arena seats you at a new table."),
    # #38: a Rematch button of a game whose rematch started already
    "rematch_stale": N_("The rematch of this game has already started."),
    "take_back": N_("You are already playing your seat yourself."),
}
NOT_SEATED: dict[str, str] = {
    # a not_seated refusal's info["action"] (tables.games)
    "rematch": N_("Only the players of this game can ask for its rematch."),
}
ARENA_GAME_OVER = N_("This arena game is over: while the arena runs, it seats you at a new table.")
"""#41: a stale button of an ended arena game (an arena's game has no rematch)."""
ELSEWHERE: dict[str, str] = {
    # seated_elsewhere: the table is in this chat, in a group, or a private game
    "here": N_("You are already at this table: {game}."),
    "group": N_("You are already at a {game} table in a group: leave it first (/leave)."),
    "private": N_("You are already at a {game} table (a private game): leave it first (/leave)."),
}
MOVE_NOT_POSSIBLE = N_("That move is not possible now.")
PAGE_TOO_FAST = N_("Too many moves in a row: wait a moment.")  # the Mini App (#42)
COOLDOWN_MINE = N_(
    "You left rated games unfinished: you can play rated games again in {time}. "
    "Games without rating are open to you now."
)
COOLDOWN_OTHER = N_(
    "{name} left rated games unfinished and can play rated games again in {time}. "
    "Switch the lobby to a game without rating (⚙ Settings), or wait."
)

UNAVAILABLE = REFUSALS["unavailable"]
OPEN_TABLE = N_("Open my table")
HERE_IS_YOUR_TABLE = N_("Here is your table.")
HAND_MOVED_DOWN = N_("Your cards are in a newer message below.")
SORRY = N_("Sorry, something went wrong on our side. Please try again in a minute.")
STALE = N_("This button is out of date: here is the current position.")
NOT_YOUR_MESSAGE = N_("This is an old message: your cards are in a newer one.")
BAD_BUTTON = N_("This button is not valid.")
UNKNOWN_COMMAND = N_("I do not know that command. /help shows what I can do.")
PLAIN_TEXT = N_("I play by commands and buttons, not by text messages. In short:")
GREETING = N_(
    "Hi! I run games of Chuvash Rooster and Durak Shchelkovsky here.\n"
    "Send /new to open a lobby (or /new shchelkovsky), then everyone presses Join. "
    "If you have started a private chat with me, your cards come there; if not, they show "
    "up right here, where only you see them."
)
"""#41: true for both kinds of players (:func:`telegram_bot.publishing.hands.in_group`)."""
WELCOME = N_("Welcome! I deal the cards here, and in any group you add me to (the button below).")
"""The first line of /start in the private chat; /help follows it, and says the
rest (#41: the /play and /new sentences were said twice)."""
JOINED = N_("You joined the lobby.")
JOINED_HERE = N_(
    "You joined the lobby. I will show your cards here, to you alone (🎴 My cards under "
    "the table message shows them again)."
)
JOINED_GROUP = N_("You joined the lobby of {game} in the group “{group}”.")
JOINED_PRIVATE = N_("You joined the lobby of {game} gathered by {name}.")
LEFT = N_("You left.")
# a command sent as the group (an anonymous admin) or a channel: no person to seat
WRITE_AS_YOURSELF = N_(
    "Only a person can play: send this command as yourself, not on behalf of the group "
    "or a channel."
)
# /leave once out of the game (RULES: no cards, no stock): nothing to hand to the AI
LEFT_WHEN_OUT = N_("You left the table. You were out of the game already: your place in it stands.")
REMATCH_WAITING = N_(
    "You are in. Waiting for {names}: the rematch starts once they agree, or in {seconds} s "
    "with those who did."
)
"""#38: his yes to a rematch that waits for others (the result messages show who agreed)."""
LEFT_OVER = N_("You left, and the AI played the game out. /play or /new starts another.")
LEFT_GAME = N_(
    "You left the game: the AI plays your seat. You may take it back while the game lasts."
)
NOT_SITTING = N_("You are not at any table now.")
OPEN_PRIVATE = N_("Open the private chat with me first, then come back.")
# #41: /leave mid-game is answered below the command, and says where the way back is
LEFT_SEAT_ABOVE = N_(
    "You left: the AI plays your seat now. Your cards message above has 🙋 Take my seat "
    "back while the game lasts."
)
LEFT_SEAT_PRIVATE = N_(
    "You left: the AI plays your seat now. Your private chat with me has 🙋 Take my seat "
    "back while the game lasts."
)
LEFT_SEAT_GROUP = N_(
    "You left: the AI plays your seat now. Your cards message in the group has 🙋 Take my "
    "seat back while the game lasts."
)
GAME_STARTED = N_(
    "The game has started, the table is below: its 🎴 My cards shows your cards here, to "
    "you alone; 🔒 Private chat sends them to your private chat with me."
)
GAME_STARTED_PRIVATE = N_("The game has started: your cards are below.")
GAME_OVER_BELOW = N_("The game is over: the result is below.")
"""#41: the lobby message once its game is over -- no longer «The game has
started», above the result."""
REMATCH_STARTED = N_("The rematch has started: the new game is below.")
"""#41: an old result once its rematch started -- its offer is over."""
CARDS_BELOW = N_("Your cards are below.")
"""#41: his cards brought back to the private chat mid-game (the game started long ago)."""
LOBBY_CANCELLED = N_("The lobby was cancelled.")
AI_PLAYS = N_("🤖 The AI plays your seat now.")
TAKE_BACK = N_("Take my seat back")
TIMEOUT_WARNING = N_(
    "Your time ran out, so a move was made for you. If it runs out once more, the AI "
    "takes your seat."
)
TAKEN_OVER = N_(
    "Your time ran out again: the AI plays your seat now. 🙋 Take my seat back, under your "
    "cards, lets you play it yourself again while the game lasts."
)
SEAT_BACK = N_("You are playing your seat again.")
ARENA_HAND = N_("An arena game: your place in it scores points for you in the arena's standings.")
"""#41: the first line of an arena game's hand (it never said it was one)."""
ARENA_RESULT = N_("An arena game: each place scores its points in the arena's standings.")
"""#41: an arena game's result says so, where a game's ratings would be (it has none)."""
GAME_STOPPED = N_("The game was stopped by an operator.")
GAME_RESET = N_("The game was reset by an operator: the lobby is open again.")
GAME_STOPPED_REMOVED = N_(
    "The bot was removed from the group, so this game ended without a result: no rating "
    "change and no penalty for anybody."
)
GAME_STOPPED_UPGRADED = N_(
    "The group became a supergroup, so this game ended without a result: no rating "
    "change and no penalty for anybody."
)
STOPPED_NOTICES = {"removed": GAME_STOPPED_REMOVED, "upgraded": GAME_STOPPED_UPGRADED}
"""A hand's last words when its table was stopped by the loss of its group (#38),
by :attr:`tables.Table.stopped`; an operator's stop says :data:`GAME_STOPPED`."""
CHOOSE_LANGUAGE = N_("Choose your language:")
LANGUAGE_SET = N_("The language is now English.")
GROUP_LANGUAGE_SET = N_("The group's language is now English.")
TOP_IN_GROUPS = N_("The leaderboard belongs to a group: send /top there.")
ONLY_ADMINS = N_("Only the group's admins can change its language.")
PLAY_IN_GROUP = N_(
    "A game against the AI goes on in the private chat with me; a game with this group "
    "starts with a lobby here."
)
PLAY_SOLO = N_("Play against the AI")
PLAY_CHOOSE = N_(
    "A game against the AI: choose the game and the AI's level, and it starts at once."
)
PLAY_AGAIN = N_("Again: {game} · {level}")
"""#41: ``/play`` offers every game and AI level, one tap each; his last choice
first («▶ Again: Chuvash · hard»)."""
OPEN_LOBBY = N_("Open a lobby here")
ADD_TO_GROUP = N_("Add me to a group")
NEW_GAME_LOBBY = N_("Your lobby is ready. Send the invitation link to your friends:")
UNKNOWN_GAME = N_("I know two games: /new chuvash or /new shchelkovsky.")
UNKNOWN_PLAY = N_(
    "Usage: /play [game] [level] — game: chuvash or shchelkovsky; AI level: easy, normal, hard"
    " or expert."
)
NO_SUCH_LOBBY = N_("That invitation is no longer valid.")
NO_LOBBY_TO_SHARE = N_("Open a lobby with /new first")
YOUR_TABLE = N_("You are at a table: {link}")


def refusal(error: EngineError, _: Translator, chat: int | None = None) -> str:
    """A refusal of the service or the engine in the reader's language, with its
    real reason (issue 13); ``chat``: where the refused command was sent (a
    ``seated_elsewhere`` at a table of this very chat says so)."""
    info = getattr(error, "info", {})
    if error.code == "seated_elsewhere" and info.get("variant") in VARIANT_TITLES:
        game = _(VARIANT_TITLES[info["variant"]])  # plain: an alert shows no HTML
        where = info.get("chat")
        group = where is not None and where < 0
        key = "here" if chat is not None and where == chat else "group" if group else "private"
        return _(ELSEWHERE[key], game=game)
    if error.code == "cooldown":  # #25: with the time left, whose it is
        left = duration(int(info.get("left", 60)), _)
        if info.get("name"):
            return _(COOLDOWN_OTHER, name=info["name"], time=left)
        return _(COOLDOWN_MINE, time=left)
    if error.code == "game_over" and info.get("arena"):
        return _(ARENA_GAME_OVER)
    specific = {"not_owner": NOT_OWNER, "not_allowed": NOT_ALLOWED, "not_seated": NOT_SEATED}.get(
        error.code, {}
    )
    text = specific.get(info.get("action", "")) or REFUSALS.get(error.code)
    return _(text) if text else _(MOVE_NOT_POSSIBLE)


# hands shown in the group as ephemeral messages (issue 14)
CARDS_HERE = N_("Your cards are below: only you see them.")
CARDS_NOT_HERE = N_("I could not show your cards here: they are in your private chat with me.")
CARDS_OPEN_PRIVATE = N_(
    "{name}, I could not show your cards in the group: open them in your private chat with me."
)
OPEN_MY_CARDS = N_("Open my cards")
FLOOD_HINT = N_(
    "The group's message limit is slowing your cards down. In a private chat with me they "
    "update at once."
)
"""#24: his hand in the group was held back by the group's flood limit (a line of
that hand, with *Private chat*, for the rest of the game)."""
CARDS_MOVED = N_(
    "Your cards are in the group now, where only you see them. The button below brings "
    "them back here."
)


MOVE_REFUSALS = {
    moves.ERR_NOT_YOUR_TURN: N_("It is not your move now."),
    moves.ERR_NOT_IN_HAND: N_("You do not hold that card."),
    moves.ERR_CANNOT_PLAY: N_("That card cannot be played now."),
    moves.ERR_NOT_LEGAL: N_("That move is not possible now."),
    moves.ERR_BAD_SELECTION: N_("The selected cards do not make a move."),
    moves.ERR_DEFENDER_LIMIT: N_("The defender can beat at most {n} cards."),
    moves.ERR_THROW_LIMIT: N_("At most {n} cards can be thrown in now."),
}
"""The words of each reason a press makes no move (:func:`telegram_bot.buttons.moves.resolve`)."""
