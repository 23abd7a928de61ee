"""The fair deal and spectators in the screens (issue #16, pure): the commitment
while the game is played (whole in the game's first message and the result, a
tag on every later edit: #41), the seed and the check command once it is over,
the *Replay* and *Watch* buttons, a spectator's screen without any hand."""

from __future__ import annotations

from dataclasses import replace

import pytest

import engine
from engine.fairness import commitment
from sandbox.fake_api.text import parse_text
from tables import OVER, PLAYING, GameResult, Loaded, Seat, Table
from telegram_bot.buttons.callbacks import ReplayCb, ReplayOp, WatchCb
from telegram_bot.buttons.moves import Selection
from telegram_bot.state.chat_state import TableUi
from telegram_bot.state.snapshot import Snapshot
from telegram_bot.views.fair import SHORT, deal_check_text
from telegram_bot.views.hand import hand_screen
from telegram_bot.views.i18n import LANGUAGES, Translator
from telegram_bot.views.table import table_screen, watch_screen
from tests.bot.e2e_kit import cards_in

SEED = 424242


def snap(
    status: str,
    *,
    chat: int | None = -100,
    spectators: bool = True,
    result: bool = True,
    arena: str = "",
) -> Snapshot:
    seats = (Seat(user=1, name="Ann"), Seat(user=2, name="Bob"), Seat(name="AI", ai="heuristic"))
    table = Table(
        id="Abc_-123456", chat=chat, creator=1, variant="chuvash", options={}, max_seats=4,
        timer=0, seats=seats, status=status, game_no=1, seed=SEED, spectators=spectators,
        arena=arena,
    )  # fmt: skip
    state = engine.new_game("chuvash", 3, SEED)
    if status == OVER:
        while not state.over:
            state.apply(state.legal_actions(state.to_act()[0])[0])
    res = GameResult(table.id, 1, "chuvash", chat, (1, 2, 3), 2, False, (), 0) if result else None
    loaded = Loaded(version=5, table=table, state=state, deadline=None, result=res)
    return Snapshot(loaded, TableUi(group_lang="en"))


def data(markup: object) -> list[str]:
    rows = getattr(markup, "inline_keyboard", None) or []
    return [b.callback_data or "" for row in rows for b in row]


DIGEST = commitment(SEED, "chuvash", 3, {})


def test_table_shows_the_commitment_and_watch() -> None:
    text, markup = table_screen(snap(PLAYING), "bot", first=True)
    plain, entities = parse_text(text, "HTML")
    assert DIGEST in plain
    assert str(SEED) not in plain  # the seed stays secret while the game is played
    assert any(e["type"] == "expandable_blockquote" for e in entities)
    assert WatchCb(table="Abc_-123456").pack() in data(markup)
    _text, markup = table_screen(snap(PLAYING, spectators=False), "bot")
    assert not any(d.startswith("w:") for d in data(markup))


def shows_a_tag(text: str) -> bool:
    """One line of the commitment's prefix, not the whole of it (#41)."""
    plain, entities = parse_text(text, "HTML")
    lines = [x for x in plain.splitlines() if "🔒" in x]
    return (
        DIGEST not in plain
        and len(lines) == 1
        and lines[0].endswith(DIGEST[:SHORT])
        and not any(e["type"] == "expandable_blockquote" for e in entities)
    )


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_commitment_is_whole_at_the_start_and_in_the_result_else_a_tag(lang: str) -> None:
    """#41: the whole fingerprint on every edit pushed the cards and the prompt
    down on a phone.  The game's first message shows it whole -- the group's
    table message, or the hand where no table message shows it (a private game,
    an arena's, which has none) --, every later version a one-line tag, the
    result whole again."""
    private = snap(PLAYING, chat=None)
    arena = snap(PLAYING, arena="abcDEF12")  # no table message: its hands show it (#38)
    for start in (
        table_screen(snap(PLAYING), "bot", first=True)[0],
        hand_screen(private, 0, lang, Selection(), first=True)[0],
        hand_screen(arena, 1, lang, Selection(), first=True)[0],
    ):
        assert DIGEST in parse_text(start, "HTML")[0]
    for later in (
        table_screen(snap(PLAYING), "bot")[0],
        hand_screen(private, 0, lang, Selection())[0],
        hand_screen(arena, 1, lang, Selection())[0],
        watch_screen(snap(PLAYING), lang)[0],
    ):
        assert shows_a_tag(later), later
    # a group game's hand: the table message shows it, not the hand
    for sent in (True, False):
        text = hand_screen(snap(PLAYING), 0, lang, Selection(), first=sent)[0]
        assert DIGEST[:SHORT] not in text
    for result in (
        table_screen(snap(OVER), "bot")[0],
        hand_screen(snap(OVER), 0, lang, Selection())[0],
        hand_screen(snap(OVER, chat=None), 0, lang, Selection())[0],
        watch_screen(snap(OVER), lang)[0],
    ):
        assert DIGEST in parse_text(result, "HTML")[0]


def test_game_over_offers_replay_and_the_check_behind_a_button() -> None:
    """The result carries no command line (#29): the seed and the command are
    behind *Check the deal*; the commitment, as the game's first message showed
    it, is in the result (#41)."""
    for text, markup in (
        table_screen(snap(OVER), "bot"),
        hand_screen(snap(OVER), 0, "en", Selection()),
    ):
        plain, _e = parse_text(text, "HTML")
        assert "python" not in plain
        assert str(SEED) not in plain
        assert DIGEST in plain
        ops = [ReplayCb.unpack(d) for d in data(markup) if d.startswith("rp:")]
        assert [(cb.op, cb.game) for cb in ops] == [(ReplayOp.OPEN, 1), (ReplayOp.CHECK, 1)]
    record = {"seed": str(SEED), "commitment": DIGEST, "variant": "chuvash", "players": 3}
    for lang in ("en", "ru", "uk"):
        plain, _e = parse_text(deal_check_text(record, Translator(lang)), "HTML")
        assert f": {SEED}" in plain
        assert DIGEST in plain
        assert plain.endswith(
            f"python -m engine verify {SEED} {DIGEST} --variant chuvash --players 3"
        )
    # ended by an operator: no result, so no record to replay
    _text, markup = table_screen(snap(OVER, result=False), "bot")
    assert not any(d.startswith("rp:") for d in data(markup))


@pytest.mark.parametrize("chat", [None, 5])
def test_a_private_game_shows_the_commitment_in_the_hand(chat: int | None) -> None:
    text, _m = hand_screen(snap(PLAYING, chat=chat), 0, "en", Selection(), first=True)
    assert DIGEST in parse_text(text, "HTML")[0]
    text, _m = hand_screen(snap(PLAYING), 0, "en", Selection())  # a group's: on the table
    assert DIGEST not in parse_text(text, "HTML")[0]


def test_a_spectator_sees_no_hand() -> None:
    s = snap(PLAYING)
    state = s.loaded.state
    assert state is not None
    text, markup = watch_screen(s, "en")
    public, _m = table_screen(s, "bot")
    assert cards_in(text) == cards_in(public)
    hands = {engine.card_name(c) for seat in range(3) for c in state.hand(seat)}
    assert not cards_in(text) & hands - cards_in(public)
    assert markup is None
    over = replace(s, loaded=snap(OVER).loaded)
    _text, markup = watch_screen(over, "en")
    assert [d[:3] for d in data(markup)] == ["rp:", "rp:"]  # Replay, Check; never Rematch


@pytest.mark.parametrize(
    ("variant", "options", "tail"),
    [
        ("chuvash", {"decks": 1, "remove_joker": False}, "--variant chuvash --players 3"),
        ("shchelkovsky", {"decks": 2, "remove_joker": True}, "--players 3 --decks 2"),
        ("shchelkovsky", {"decks": 4, "remove_joker": False}, "--decks 4 --keep-jokers"),
    ],
)
def test_the_check_command_prints_the_games_own_options(
    variant: str, options: dict[str, object], tail: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Chuvash game's command said ``--decks 1 --keep-jokers``, options that
    ``--help`` calls Shchelkovsky's (#29); the command as printed checks out."""
    from engine.__main__ import main
    from engine.fairness import commitment
    from telegram_bot.views.fair import verify_command

    digest = commitment(777, variant, 3, options)
    command = verify_command(777, digest, variant, 3, options)
    assert command.endswith(tail), command
    assert main(command.split()[3:]) == 0
    assert '"ok": true' in capsys.readouterr().out
