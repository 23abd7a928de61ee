"""Rendering real engine states: no hidden card ever shown, Telegram's limits kept
(text, rows, buttons, callback data), names escaped, every language."""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from aiogram.types import InlineKeyboardButton, InlineKeyboardMarkup

import engine
from engine import Action, GameState, find_variant, from_deal
from engine.cards import Card, card_name
from sandbox.fake_api.text import parse_text
from tables import OVER, GameResult, Loaded, Seat, Table
from tables.games import finish_places
from tables.ratings import BoardRow
from telegram_bot.buttons.callbacks import GameCb, LobbyCb, LobbyOp, parse_game, parse_lobby
from telegram_bot.buttons.moves import Selection, card_moves
from telegram_bot.state.chat_state import TableUi
from telegram_bot.state.snapshot import Snapshot
from telegram_bot.views.cards import card_label, glyph, group_hand
from telegram_bot.views.format import history_lines
from telegram_bot.views.hand import PAGE_SIZE, hand_screen, render_hand
from telegram_bot.views.i18n import LANGUAGES, Translator
from telegram_bot.views.lobby import (
    CREATOR_MARK,
    PROVISIONAL_MARK,
    RATED_TIMER_NOTE,
    VariantStats,
    render_invite,
    render_lobby,
    render_rating_top,
    render_ratings,
    render_stats,
    settings_keyboard,
    settings_text,
    stats_from_counts,
)
from telegram_bot.views.table import render_game_over, render_table, table_screen, watch_screen

NAMES = [f"Player{i}" for i in range(10)]
GID = "Abc_-123456"


def game_cb(data: str | None) -> GameCb:
    """A game button's parsed data (a button that is not one fails the test)."""
    cb = parse_game(data)
    assert cb is not None, data
    return cb


def lobby_cb(data: str | None) -> LobbyCb:
    """A lobby button's parsed data (a button that is not one fails the test)."""
    cb = parse_lobby(data)
    assert cb is not None, data
    return cb


def check_limits(text: str, markup: InlineKeyboardMarkup | None) -> list[InlineKeyboardButton]:
    assert 1 <= len(text) <= 4096
    if markup is None:
        return []
    rows = markup.inline_keyboard
    assert sum(len(r) for r in rows) <= 100
    buttons: list[InlineKeyboardButton] = []
    for row in rows:
        assert 1 <= len(row) <= 8
        for b in row:
            assert b.text
            if b.callback_data is not None:
                assert 1 <= len(b.callback_data.encode()) <= 64
                assert parse_game(b.callback_data) or parse_lobby(b.callback_data), b
            buttons.append(b)
    return buttons


def known_to(view: dict[str, Any]) -> Counter[str]:
    """Every card the seat may legitimately see named: his hand, the table, the
    face-up trump, a shown pass-ticket and the cards in the events of his view."""
    known = Counter(view.get("hand", ()))
    for attack, cover in view["table"]:
        known[attack] += 1
        if cover:
            known[cover] += 1
    if view["trump_card"]:
        known[view["trump_card"]] += 1
    if view["pass_ticket"]:
        known[view["pass_ticket"]["card"]] += 1
    for e in view["events"]:
        known.update(e.get("cards", ()))
    return known


def hidden_from(state: GameState, view: dict[str, Any]) -> set[str]:
    """Cards some other seat holds that this seat cannot know of at all."""
    seat = view.get("seat", -1)
    others: Counter[str] = Counter()
    for s in range(state.players):
        if s != seat:
            others.update(card_name(c) for c in state.hand(s))
    others.update(card_name(c) for c in state.stock)
    known = known_to(view)
    return {c for c in others if not known[c]}


def button_card(b: InlineKeyboardButton, view: Mapping[str, Any], locale: str = "en") -> str | None:
    """The card a hand button shows: from its data, or for a disabled (greyed)
    card button, which carries none, from its label."""
    if b.disabled is not None:
        hand = group_hand(view["hand"], view["trump"])
        labels = {card_label(c, locale, n): c for c, n in hand}
        return labels[b.text]
    cb = game_cb(b.callback_data)
    return cb.press.card if cb.press.kind == "card" else None


def shown_cards(
    text: str, buttons: list[InlineKeyboardButton], view: Mapping[str, Any], locale: str = "en"
) -> tuple[str, Counter[str]]:
    """All visible text, and the card buttons of the hand (card -> count shown)."""
    visible = [text] + [b.text for b in buttons]
    counts: Counter[str] = Counter()
    for b in buttons:
        card = button_card(b, view, locale)
        if card is not None:
            m = re.search(r"×(\d+)$", b.text)
            counts[card] += int(m.group(1)) if m else 1
    return "\n".join(visible), counts


def assert_private(
    state: GameState, seat: int, locale: str = "en", selection: str | None = None
) -> None:
    view = engine.view(state, seat)
    pages = max(1, -(-len(set(view["hand"])) // PAGE_SIZE))
    hand_shown: Counter[str] = Counter()
    hidden = hidden_from(state, view)
    for p in range(pages):
        sel = Selection(cards=(), choose=selection, page=p)
        text, markup = render_hand(
            view, locale=locale, names=NAMES, game_id=GID, version=123456, selection=sel
        )
        buttons = check_limits(text, markup)
        visible, counts = shown_cards(text, buttons, view, locale)
        hand_shown += counts
        for card in hidden:
            assert glyph(card, locale) not in visible, (seat, card, visible)
        for b in buttons:
            if b.disabled is not None:  # a card that cannot be played now
                assert button_card(b, view, locale) in view["hand"]
                continue
            cb = parse_game(b.callback_data)
            assert cb is not None
            if cb.press.kind == "action":
                a = Action.from_text(seat, cb.press.action)
                cards = [card_name(c) for c in (*a.cards, a.attack) if c >= 0]
                assert not set(cards) & hidden
    assert hand_shown == Counter(view["hand"]), "every card of the hand shown exactly once"


def assert_public(state: GameState, locale: str = "en") -> None:
    view = engine.public_view(state)
    assert "hand" not in view
    assert "legal" not in view
    text, markup = render_table(view, locale=locale, names=NAMES, bot_username="durak_bot")
    buttons = check_limits(text, markup)
    hidden = hidden_from(state, view)
    visible = "\n".join([text] + [b.text for b in buttons])
    for card in hidden:
        assert glyph(card, locale) not in visible, card


def cards(text: str) -> list[Card]:
    return engine.parse_cards(text.split())


def final_state(
    variant: str,
    players: int,
    seed: int,
    options: Mapping[str, Any] | None = None,
    steps: int = 60,
) -> GameState:
    *_, g = random_game(variant, players, seed, options, steps)  # the last state is wanted
    return g


def random_game(
    variant: str,
    players: int,
    seed: int,
    options: Mapping[str, Any] | None = None,
    steps: int = 60,
) -> Iterator[GameState]:
    rng = random.Random(seed)
    g = engine.new_game(variant, players, seed=seed, options=options)
    for _ in range(steps):
        if g.over:
            break
        seat = rng.choice(g.to_act())
        g.apply(rng.choice(g.legal_actions(seat)))
        yield g


@pytest.mark.parametrize(
    ("variant", "players", "options"),
    [
        ("chuvash", 2, None),
        ("chuvash", 6, None),
        ("shchelkovsky", 2, {"decks": 2}),
        ("shchelkovsky", 5, {"decks": 2, "remove_joker": False}),
        ("shchelkovsky", 10, {"decks": 4}),
    ],
)
def test_no_hidden_card_in_any_message(
    variant: str, players: int, options: dict[str, Any] | None
) -> None:
    for seed in range(3):
        for i, g in enumerate(random_game(variant, players, seed, options, steps=400)):
            if i % 7:
                continue
            locale = LANGUAGES[i % 3]
            for seat in range(players):
                assert_private(g, seat, locale)
            assert_public(g, locale)


def test_choice_buttons_show_only_own_and_table_cards() -> None:
    g = from_deal(
        "chuvash",
        None,
        [cards("6C 7C 10S"), cards("8C 8D QH 6S AS KH")],
        [],
        first_attacker=0,
    )
    g.apply(Action.from_text(0, "L6C7C"))
    assert_private(g, 1, selection="8C")
    _, markup = render_hand(
        engine.view(g, 1),
        locale="en",
        names=NAMES,
        game_id=GID,
        version=3,
        selection=Selection(choose="8C"),
    )
    labels = [b.text for row in markup.inline_keyboard for b in row]
    assert "6♣️→8♣️" in labels
    assert "7♣️→8♣️" in labels
    assert card_moves(engine.view(g, 1), "8C") == ["C6C8C", "C7C8C"]


def huge_game() -> GameState:
    """10 players, 4 decks; seat 0 holds 64 cards, the others 6 each."""
    options = find_variant("shchelkovsky").options({"decks": 4, "remove_joker": False})
    deck = find_variant("shchelkovsky").deck(options)
    random.Random(7).shuffle(deck)
    deck.remove(52)
    deck.append(52)  # keep jokers out of the face-up bottom card
    non_joker_bottom = next(i for i, c in enumerate(deck) if c != 52)
    deck[0], deck[non_joker_bottom] = deck[non_joker_bottom], deck[0]
    hands = [deck[1:65]] + [deck[65 + 6 * i : 71 + 6 * i] for i in range(9)]
    stock = [*deck[119:], deck[0]]
    return from_deal("shchelkovsky", options, hands, stock, first_attacker=9)


def test_huge_hand_is_paged_within_limits() -> None:
    g = huge_game()
    assert g.sizes[0] == 64
    assert len(set(g.hand(0))) > PAGE_SIZE  # several pages
    # seat 9 leads at seat 0, who then has many options
    g.apply(g.legal_actions(9)[0])
    for seat in (0, 1, 9):
        assert_private(g, seat)
        for locale in LANGUAGES:
            assert_private(g, seat, locale)
    view = engine.view(g, 0)
    _, markup = render_hand(view, locale="ru", names=NAMES, game_id=GID, version=1)
    labels = [b.text for row in markup.inline_keyboard for b in row]
    assert any("×" in label for label in labels)  # identical cards grouped
    assert "1/" in " ".join(labels)  # pager
    rng = random.Random(1)
    for _ in range(40):  # play on with the huge hand
        if g.over:
            break
        seat = rng.choice(g.to_act())
        g.apply(rng.choice(g.legal_actions(seat)))
        for s in (0, seat):
            assert_private(g, s)


def test_hand_sorted_by_suit_then_rank_trumps_and_jokers_last() -> None:
    g = from_deal(
        "shchelkovsky",
        {"decks": 2},
        [
            cards("JK 3H AC 2D 10H 5H 2C 5H"),
            cards("4S 5S 6S 7S 8S 9S"),
        ],
        engine.parse_cards(["9H"]),
        first_attacker=1,
    )
    _, markup = render_hand(engine.view(g, 0), locale="en", names=NAMES, game_id=GID, version=0)
    labels = [b.text.lstrip("•✓") for row in markup.inline_keyboard for b in row]
    assert labels == ["2♣️", "A♣️", "2♦️", "3♥️", "5♥️×2", "10♥️", "🃏"]  # trump ♥️ (9♥️ face up)
    v = engine.view(g, 0)
    pressed = [button_card(b, v) for row in markup.inline_keyboard for b in row]
    assert pressed == ["2C", "AC", "2D", "3H", "5H", "10H", "JK"]


def test_long_names_history_and_escaping() -> None:
    names = ["<script>&" + "x" * 300, *("Ж" * 80 for _ in range(9))]
    g = final_state("shchelkovsky", 10, 3, {"decks": 4}, steps=300)
    view = engine.view(g, 0)
    text, markup = render_hand(
        view,
        locale="uk",
        names=names,
        game_id=GID,
        version=99,
        history=500,
        deadline=datetime(2030, 1, 1, 12, 0, 5, tzinfo=UTC),
    )
    check_limits(text, markup)
    assert "<script>" not in text
    assert "&lt;script&gt;&amp;" in text
    assert "12:00:05" in text
    table, _ = render_table(engine.public_view(g), locale="ru", names=names, history=500)
    check_limits(table, None)


def test_text_limit_drops_history_first() -> None:
    g = final_state("shchelkovsky", 10, 5, {"decks": 4}, steps=200)
    view = dict(engine.view(g, 0, last_events=2000))
    view["events"] = view["events"] * 50  # far more history than fits
    text, _ = render_hand(view, locale="en", names=NAMES, game_id=GID, version=1, history=10_000)
    assert len(text) <= 4096
    assert "Players" in text
    assert "Table" in text
    assert "Last moves" in text


def test_status_lines() -> None:
    g = from_deal(
        "chuvash",
        None,
        [cards("6C 7C"), cards("8S 9S")],
        [],
        first_attacker=0,
    )
    mine, _ = render_hand(
        engine.view(g, 0), locale="en", names=["Ann", "Bob"], game_id=GID, version=0
    )
    other, kb = render_hand(
        engine.view(g, 1), locale="en", names=["Ann", "Bob"], game_id=GID, version=0
    )
    assert "Your move" in mine
    assert "lead" in mine
    assert "Waiting for Ann" in other
    assert not any(b.text.startswith("•") for row in kb.inline_keyboard for b in row)
    ru, _ = render_hand(
        engine.view(g, 0), locale="ru", names=["Ann", "Bob"], game_id=GID, version=0
    )
    assert "Ваш ход" in ru
    assert "без козыря" in ru


def test_seats_the_ai_plays_are_said_in_words() -> None:
    g = from_deal("chuvash", None, [cards("6C 7C"), cards("8S 9S"), cards("6D 7D")], [])
    names = ["Ann", "Bob 🤖", "Cy"]
    table, _ = render_table(engine.public_view(g), locale="en", names=names, ai_seats=[1])
    assert "The AI plays for Bob 🤖 now" in table.splitlines()
    ann, _ = render_hand(
        engine.view(g, 0), locale="uk", names=names, game_id=GID, version=0, ai_seats=[1]
    )
    assert "Зараз за гравця Bob 🤖 грає комп'ютер" in ann  # one player: «за гравця» (#29)
    two, _ = render_table(
        engine.public_view(g), locale="ru", names=["Ann", "Bob 🤖", "Cy 🤖"], ai_seats=[1, 2]
    )
    assert "Сейчас за игроков Bob 🤖, Cy 🤖 играет компьютер" in two.splitlines()
    # his own message says it in its first line (the publisher), not again here
    bob, _ = render_hand(
        engine.view(g, 1), locale="en", names=names, game_id=GID, version=0, ai_seats=[1]
    )
    assert "The AI plays for" not in bob
    plain, _ = render_table(engine.public_view(g), locale="en", names=["Ann", "Bob", "Cy"])
    assert "The AI plays for" not in plain


def test_a_move_is_offered_once_when_a_cards_choice_is_open() -> None:
    """#41 (a Transfer press that did nothing): with the moves of 7♥ open (cover,
    transfer, pass-ticket, S8), the action row drew «↪ 7♥️» and «🎫 7♥️» a
    second time, with the same callback data; the sandbox refused such a press
    (before c99fdd8), so nothing reached the bot until the turn timer.  Each
    move is one button: the choice offers that card's, the row the others'."""
    g = from_deal(
        "shchelkovsky",
        {"decks": 2},
        [cards("7S 3D 7C"), cards("7H 7D 5D"), cards("9D 10D JD QD")],
        engine.parse_cards(["2H"]),
        first_attacker=0,
    )
    g.apply(Action.from_text(0, "L7S"))
    _, kb = render_hand(
        engine.view(g, 1),
        locale="en",
        names=NAMES,
        game_id=GID,
        version=4,
        selection=Selection(choose="7H"),
    )
    datas = [b.callback_data for row in kb.inline_keyboard for b in row if b.callback_data]
    moves = [d for d in datas if game_cb(d).press.kind == "action"]
    assert len(moves) == len(set(moves)), [b.text for row in kb.inline_keyboard for b in row]
    actions = {game_cb(d).press.action for d in moves}
    assert {"C7S7H", "R7H", "S7H", "R7D", "K"} <= actions  # every move still offered
    choice = [game_cb(b.callback_data).press.action for b in kb.inline_keyboard[0]]
    assert choice == ["C7S7H", "R7H", "S7H"]  # 7♥'s moves, side by side


def test_action_buttons_take_done_transfer_ticket() -> None:
    g = from_deal(
        "shchelkovsky",
        {"decks": 2},
        [
            cards("7S 3D 7C"),
            cards("7H 7D 5D"),
            cards("9D 10D JD QD"),
        ],
        engine.parse_cards(["2H"]),
        first_attacker=0,
    )
    g.apply(Action.from_text(0, "L7S"))
    _, kb = render_hand(engine.view(g, 1), locale="en", names=NAMES, game_id=GID, version=4)
    data = {
        b.text: game_cb(b.callback_data).press
        for row in kb.inline_keyboard
        for b in row
        if b.disabled is None
    }
    assert data["Take"].action == "K"
    assert data["↪ 7♥️"].action == "R7H"  # short, distinct labels (issue 13)
    assert data["↪ 7♦️"].action == "R7D"
    assert data["🎫 7♥️"].action == "S7H"
    styles = {b.text: b.style for row in kb.inline_keyboard for b in row}
    assert styles["Take"] == "danger"
    assert all(len(b.text) <= 8 for row in kb.inline_keyboard for b in row if b.text[0] in "↪🎫")
    g.apply(Action.from_text(1, "C7S7H"))
    _, kb = render_hand(engine.view(g, 0), locale="ru", names=NAMES, game_id=GID, version=5)
    labels = [b.text for row in kb.inline_keyboard for b in row]
    assert "Бито" in labels
    assert "•7♣️" in labels
    styles = {b.text: b.style for row in kb.inline_keyboard for b in row}
    assert styles["•7♣️"] == "success"  # playable now: green
    assert {styles[t] for t in labels if t[0] not in "•▶"} <= {None, "danger"}
    buttons = {b.text: b for row in kb.inline_keyboard for b in row}
    # a card that cannot be played now is shown greyed: a disabled button, no data
    assert buttons["3♦️"].disabled is not None
    assert buttons["3♦️"].callback_data is None
    assert buttons["•7♣️"].disabled is None
    # pass for the rest of the bout, below Done, in a row of its own (RULES §0 Passing; #29)
    assert game_cb(buttons["⏭ Пас до конца захода"].callback_data).press.kind == "bout_pass"
    assert [b.text for b in kb.inline_keyboard[-1]] == ["⏭ Пас до конца захода"]


def test_game_over_message() -> None:
    g = from_deal(
        "chuvash",
        None,
        [engine.parse_cards(["6C"]), engine.parse_cards(["7C", "8C"])],
        [],
        first_attacker=0,
    )
    g.apply(Action.from_text(0, "L6C"))
    g.apply(Action.from_text(1, "C6C7C"))
    assert g.over
    assert g.loser == 1
    text, kb = render_game_over(
        engine.public_view(g), locale="ru", names=["Ann", "<Bob>"], code="abc"
    )
    check_limits(text, kb)
    assert "1. Ann" in text
    assert "&lt;Bob&gt;" in text
    assert "чувашский петух" in text
    assert kb is not None  # with a code, the rematch button
    cb = parse_lobby(kb.inline_keyboard[0][0].callback_data)
    assert cb is not None
    assert cb.op is LobbyOp.REMATCH
    assert cb.code == "abc"
    text, kb = render_game_over(engine.public_view(g), locale="en", names=["Ann", "Bob"])
    assert kb is None
    assert "Game over" in text


def test_a_draws_players_share_their_place_in_the_result() -> None:
    """#38: a draw's last players share a place -- the result says so, not the
    order their hands emptied (the group's table, each hand, a spectator)."""
    g = from_deal(
        "chuvash", None, [engine.parse_cards(["6C"]), engine.parse_cards(["7C"])], [],
        first_attacker=0,
    )  # fmt: skip
    g.apply(Action.from_text(0, "L6C"))
    g.apply(Action.from_text(1, "C6C7C"))
    assert g.draw
    assert g.out == [0, 1]
    seats = (Seat(user=1, name="Ann"), Seat(user=2, name="Bob"))
    table = Table(
        id=GID, chat=-100, creator=1, variant="chuvash", options={}, max_seats=2, timer=60,
        seats=seats, status=OVER, game_no=1,
    )  # fmt: skip
    res = GameResult(GID, 1, "chuvash", -100, (1, 1), None, True, ((1, "Ann"), (2, "Bob")), 0)
    snap = Snapshot(Loaded(5, table, g, None, result=res), TableUi(group_lang="en"))
    for text, _kb in (
        table_screen(snap, "bot"),
        hand_screen(snap, 0, "en", Selection()),
        watch_screen(snap, "en"),
    ):
        plain, _e = parse_text(text, "HTML")
        assert "1. Ann" in plain
        assert "1. Bob" in plain
        assert "2. " not in plain
        # #41: the draw named, not a bare «The game is a draw» under the places
        assert "A draw: Ann and Bob went out together" in plain


def three_way_draw() -> GameState:
    """Chuvash, 3 players: Ann goes out first; Bob leads his last card to Cy, who
    covers it with hers -- nobody holds cards (RULES §0 Game over: a draw)."""
    g = from_deal(
        "chuvash", None,
        [engine.parse_cards(["6C"]), engine.parse_cards(["8C", "7D"]), engine.parse_cards(["8D"])],
        [], first_attacker=0,
    )  # fmt: skip
    for seat, text in ((0, "L6C"), (1, "C6C8C"), (2, "P"), (1, "L7D"), (2, "C7D8D")):
        g.apply(Action.from_text(seat, text))
    assert g.over
    assert g.draw
    return g


@pytest.mark.parametrize(
    ("lang", "line"),
    [
        (
            "en",
            "🤝 A draw: Bob and Cy went out together, so there is no Chuvash Rooster this time.",
        ),
        (
            "ru",
            "🤝 Ничья: Bob и Cy вышли из игры одновременно, так что чувашского петуха в этот раз нет.",
        ),
        ("uk", "🤝 Нічия: Bob і Cy вийшли з гри одночасно, тож чуваського півня цього разу немає."),
    ],
)
def test_a_draw_names_who_drew_in_words_of_each_language(lang: str, line: str) -> None:
    """#41: «1. Ann / 2. Bob / 2. Cy / Ничья» read as a dangling word: the
    players who drew share their place and one line says who drew and that
    there is no loser (RULES §0 Game over, C14 / S14)."""
    g = three_way_draw()
    seats = (Seat(user=1, name="Ann"), Seat(user=2, name="Bob"), Seat(user=3, name="Cy"))
    table = Table(
        id=GID, chat=-100, creator=1, variant="chuvash", options={}, max_seats=3, timer=60,
        seats=seats, status=OVER, game_no=1,
    )  # fmt: skip
    res = GameResult(
        GID, 1, "chuvash", -100, finish_places(g), None, True,
        ((1, "Ann"), (2, "Bob"), (3, "Cy")), 0,
    )  # fmt: skip
    assert res.places == (1, 2, 2)
    snap = Snapshot(Loaded(9, table, g, None, result=res), TableUi(group_lang=lang))
    for text, _kb in (
        table_screen(snap, "bot"),
        hand_screen(snap, 1, lang, Selection()),
        watch_screen(snap, lang),
    ):
        plain, _e = parse_text(text, "HTML")
        lines = plain.splitlines()
        assert [x for x in lines if x[:1].isdigit()][:3] == ["1. Ann", "2. Bob", "2. Cy"]
        assert line in lines
        assert not {"Ничья", "Нічия", "The game is a draw"} & set(lines)  # no word alone
    # the same in Shchelkovsky words: nobody is the durak
    shch = render_game_over(
        {"variant": "shchelkovsky", "out": [0, 1, 2], "draw": True, "loser": None},
        locale=lang, names=["Ann", "Bob", "Cy"], places=(1, 2, 2),
    )[0]  # fmt: skip
    durak = {"en": "no durak this time", "ru": "дурака в этот раз нет", "uk": "дурня цього разу"}
    assert durak[lang] in shch


# ------------------------------------------------------------------ lobby
@dataclass(frozen=True)
class FakeSeat:
    user: int | None
    name: str
    ai: str | None = None
    rating: str = ""


@dataclass(frozen=True)
class FakeLobby:
    id: str = "Lobby_Code-1"
    variant: str = "shchelkovsky"
    options: dict[str, Any] = field(default_factory=lambda: {"decks": 4, "remove_joker": True})
    max_seats: int = 10
    timer: int = 60
    seats: tuple[FakeSeat, ...] = (
        FakeSeat(1, "Ann <host>"),
        FakeSeat(None, "", "heuristic"),
        FakeSeat(2, "Bob", "heuristic"),
    )
    creator: int = 1
    ai_kind: str = "heuristic"
    rated: bool = True
    fresh: tuple[int, ...] = ()
    capped: tuple[tuple[int, int], ...] = ()
    narrow: tuple[tuple[int, int], ...] = ()


@pytest.mark.parametrize("locale", LANGUAGES)
def test_lobby_and_settings(locale: str) -> None:
    lobby = FakeLobby()
    text, kb = render_lobby(lobby, locale=locale, bot_username="durak_bot")
    buttons = check_limits(text, kb)
    assert "Ann &lt;host&gt;" in text
    assert "🤖" in text
    assert "https://t.me/durak_bot?start=Lobby_Code-1" in text
    title = text.split("\n")[0]  # the game and who gathers it, not the code (issue 13)
    assert "Lobby_Code-1" not in title
    assert "Ann &lt;host&gt;" in title
    ops = {lobby_cb(b.callback_data).op for b in buttons if b.callback_data}
    assert ops == {
        LobbyOp.JOIN,
        LobbyOp.LEAVE,
        LobbyOp.ADD_AI,
        LobbyOp.REMOVE_AI,
        LobbyOp.SETTINGS,
        LobbyOp.START,
        LobbyOp.CANCEL,
    }
    assert any(b.switch_inline_query == "Lobby_Code-1" for b in buttons)
    kb = settings_keyboard(lobby, locale=locale)
    buttons = check_limits(settings_text(lobby, locale=locale), kb)
    sets = [lobby_cb(b.callback_data) for b in buttons]
    args = {cb.arg for cb in sets if cb.op is LobbyOp.SET}
    assert {"game=chuvash", "decks=2", "decks=4", "joker=0", "timer=120", "max=10"} <= args
    assert {"watch=0", "watch=1"} <= args  # spectators allowed or not (issue #16)
    assert {"level=easy", "level=normal", "level=hard"} <= args
    assert {"rated=0", "rated=1"} <= args  # #25
    assert "timer=0" not in args  # a rated lobby: a rated game always has a turn timer (#38)
    _ = Translator(locale)
    assert _(RATED_TIMER_NOTE) in settings_text(lobby, locale=locale)  # and it says why
    ticked = {lobby_cb(b.callback_data).arg for b in buttons if b.text.startswith("✓")}
    assert ticked == {
        "game=shchelkovsky",
        "decks=4",
        "joker=1",
        "timer=60",
        "level=normal",
        "max=10",
        "watch=1",
        "rated=1",
    }
    hard = FakeLobby(seats=(FakeSeat(1, "Ann"), FakeSeat(None, "AI 1", "search")), ai_kind="search")
    ticked = {
        lobby_cb(b.callback_data).arg
        for row in settings_keyboard(hard, locale=locale).inline_keyboard
        for b in row
        if b.text.startswith("✓")
    }
    assert "level=hard" in ticked
    hard_text, _kb = render_lobby(hard, locale=locale)
    assert _("AI {n}", n="1") + " (" + _("hard") + ")" in hard_text  # «Компьютер 1 (сложный)»
    chuvash = FakeLobby(variant="chuvash", options={}, max_seats=6, timer=0, rated=False)
    args = {
        lobby_cb(b.callback_data).arg
        for row in settings_keyboard(chuvash, locale=locale).inline_keyboard
        for b in row
    }
    assert not any(a.startswith(("decks", "joker")) for a in args)
    assert "max=7" not in args
    assert "timer=0" in args
    assert _(RATED_TIMER_NOTE) not in settings_text(chuvash, locale=locale)
    text, kb = render_invite(lobby, locale=locale, bot_username="durak_bot")
    check_limits(text, kb)
    assert kb.inline_keyboard[0][0].url == "https://t.me/durak_bot?start=Lobby_Code-1"


def test_stats_and_top() -> None:
    stats = stats_from_counts(
        {"chuvash:games": "3", "chuvash:losses": "1", "chuvash:p1": "2", "bogus": "1", "x:y": "z"}
    )
    assert stats == [VariantStats("chuvash", 3, 1, 0, {1: 2})]
    text = render_stats("<Ann>", stats, locale="ru")
    assert "&lt;Ann&gt;" in text
    assert "Чувашский петух" in text
    assert "партий: 3" in text
    assert "/play" in render_stats("Ann", [], locale="en")


def test_the_leaderboard_ranks_by_rating_and_lists_new_players_apart() -> None:
    """#25: /top per game, best rating first; provisional players («?») after,
    on a line of their own; a game nobody has a rating in is left out."""
    boards = {
        "chuvash": [
            BoardRow(1, "Ann", 1310, False, 40),
            BoardRow(2, "<Bob>", 1250, False, 22),
            BoardRow(3, "Cy", 1020, True, 3),
        ],
        "shchelkovsky": [],
    }
    text = render_rating_top(boards, locale="en")
    lines = text.splitlines()
    assert lines[2] == "<b>Chuvash Rooster</b>"
    assert lines[3].startswith("🥇 Ann — 1310")
    assert lines[4].startswith("🥈 &lt;Bob&gt; — 1250")
    assert "Cy 1020?" in lines[5]
    assert "Shchelkovsky" not in text
    assert "/new" in render_rating_top({"chuvash": [], "shchelkovsky": []}, locale="uk")
    ru = render_rating_top(boards, locale="ru")
    assert "Чувашский петух" in ru


def test_the_deadline_is_a_date_time_entity_each_client_shows_relative() -> None:
    """Not «ход до 06:23:35 UTC» (issue 13): Telegram's ``date_time`` entity, which
    each client renders relative, in the reader's language and time zone."""
    g = final_state("chuvash", 3, 1, {}, steps=5)
    at = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=60)
    text, _ = render_hand(
        engine.view(g, 0), locale="ru", names=NAMES, game_id=GID, version=3, deadline=at
    )
    plain, entities = parse_text(text, "HTML")
    times = [e for e in entities if e["type"] == "date_time"]
    assert len(times) == 1
    assert times[0]["unix_time"] == int(at.timestamp())
    assert times[0]["date_time_format"] == "r"
    fallback = at.strftime("%H:%M:%S UTC")  # inside the entity, for older clients
    assert f"ход закончится {fallback}" in plain


def test_suits_are_emoji_and_counts_use_a_glyph_every_client_draws() -> None:
    """♥️ ♦️ look red only in emoji presentation (U+FE0F); the card back 🂠 draws as
    a black block on Android, so counts of cards held use 🎴 (issue 13)."""
    g = final_state("chuvash", 3, 2, {}, steps=8)
    text, markup = render_hand(engine.view(g, 0), locale="ru", names=NAMES, game_id=GID, version=1)
    table, _ = render_table(engine.public_view(g), locale="ru", names=NAMES)
    labels = " ".join(b.text for row in (markup.inline_keyboard if markup else []) for b in row)
    for shown in (text, table, labels):
        assert "🂠" not in shown
        bare = re.findall("[♠♥♦♣](?!\ufe0f)", shown)
        assert bare == [], shown
    assert "🎴" in table
    assert re.search("[♠♥♦♣]\ufe0f", text + labels)


def test_passes_in_a_row_are_one_history_line() -> None:
    # seats pass by themselves, several in one write (issue 13): one line for them
    def passes(seat: int) -> dict[str, Any]:
        return {"kind": "action", "seat": seat, "cards": [], "detail": "pass"}

    lead = {"kind": "action", "seat": 0, "cards": ["6C"], "detail": "lead"}
    v = {"events": [lead, passes(1), passes(2), passes(3), lead, passes(1)], "variant": "chuvash"}
    names = ["Ann", "Bob", "Cy", "Di"]
    lines = history_lines(v, names, Translator("ru"), 6)
    assert lines[1] == "Пас: Bob, Cy, Di"
    assert lines[3] == history_lines({"events": [passes(1)]}, names, Translator("ru"), 1)[0]
    assert len(lines) == 4


@pytest.mark.parametrize("locale", LANGUAGES)
def test_a_lobby_says_rated_or_casual_and_shows_ratings(locale: str) -> None:
    """#25: a rated lobby shows each human's rating beside his name; with an AI
    seat it says its game is casual, and why; a casual lobby shows no rating."""
    en = locale == "en"
    humans = (FakeSeat(1, "Ann", rating="1240"), FakeSeat(2, "Bob", rating="1010?"))
    rated = FakeLobby(seats=humans)
    text, _kb = render_lobby(rated, locale=locale)
    assert "Ann · 1240" in text
    assert "Bob · 1010?" in text
    assert "🏆" in text
    if en:
        assert "Rated game" in text
    with_ai = FakeLobby(seats=(*humans, FakeSeat(None, "", "heuristic")))
    text, _kb = render_lobby(with_ai, locale=locale)
    assert "🎲" in text
    assert "🏆" not in text
    assert "1240" not in text  # its game would be casual: no rating beside the names
    if en:
        assert "only games without AI players are rated" in text
    casual = FakeLobby(seats=humans, rated=False)
    text, _kb = render_lobby(casual, locale=locale)
    assert "1240" not in text
    assert "🎲" in text


@pytest.mark.parametrize("locale", LANGUAGES)
def test_a_lobby_names_the_marks_of_its_seats(locale: str) -> None:
    """#41: «1000? ⭐» was unexplained -- one line under the seats names the
    marks they show (⭐ the lobby's creator; ? a provisional rating), and only
    those."""
    _ = Translator(locale)
    humans = (FakeSeat(1, "Ann", rating="1240"), FakeSeat(2, "Bob", rating="1010?"))
    text, _kb = render_lobby(FakeLobby(seats=humans), locale=locale)
    seats = text.split("\n2. ", 1)[1].splitlines()
    assert "⭐" in text
    assert seats[1] == f"<i>{_(CREATOR_MARK)} · {_(PROVISIONAL_MARK)}</i>"
    settled = (FakeSeat(1, "Ann", rating="1240"), FakeSeat(2, "Bob", rating="1010"))
    text, _kb = render_lobby(FakeLobby(seats=settled), locale=locale)
    assert _(CREATOR_MARK) in text
    assert _(PROVISIONAL_MARK) not in text
    casual = FakeLobby(seats=humans, rated=False)  # no rating shown: no «?»
    assert _(PROVISIONAL_MARK) not in render_lobby(casual, locale=locale)[0]
    nobody = FakeLobby(seats=(FakeSeat(2, "Bob"),))  # the creator does not sit: no ⭐
    text, _kb = render_lobby(nobody, locale=locale)
    assert "⭐" not in text


@pytest.mark.parametrize("locale", LANGUAGES)
def test_a_lobby_says_for_whom_its_game_is_not_rated_and_why(locale: str) -> None:
    """#38: a new player's lobby says he is new and, if no two players would
    count against each other, that the game is casual; a pair past the farming
    guard is named, and the others' game stays rated."""
    en = locale == "en"
    ann, bob, cy = FakeSeat(1, "Ann", rating="1240"), FakeSeat(2, "Bob"), FakeSeat(3, "Cy")
    text, _kb = render_lobby(FakeLobby(seats=(ann, bob), fresh=(2,)), locale=locale)
    assert "🆕" in text
    assert "Bob" in text.split("🆕")[1]
    assert "🏆" not in text
    assert "1240" not in text
    if en:
        assert "Casual game" in text
        assert "Not rated for Bob yet" in text
        assert "once they have played" in text  # no "he": players are not all men (#41)
    text, _kb = render_lobby(FakeLobby(seats=(ann, bob, cy), capped=((1, 2),)), locale=locale)
    assert "🏆" in text
    assert "⏸" in text
    line = next(x for x in text.splitlines() if x.startswith("⏸"))
    assert "Ann" in line
    assert "Bob" in line
    assert "Cy" not in line
    if en:
        assert "does not count" in line
    text, _kb = render_lobby(FakeLobby(seats=(ann, bob), capped=((1, 2),)), locale=locale)
    assert "🎲" in text
    assert "⏸" in text
    # #38, the opponent-diversity guard: the pair is named, the rest stays rated
    text, _kb = render_lobby(FakeLobby(seats=(ann, bob, cy), narrow=((1, 2),)), locale=locale)
    assert "🏆" in text
    line = next(x for x in text.splitlines() if x.startswith("🤝"))
    assert "Ann" in line
    assert "Bob" in line
    assert "Cy" not in line
    if en:
        assert "a few other people" in line
    text, _kb = render_lobby(FakeLobby(seats=(ann, bob), narrow=((1, 2),)), locale=locale)
    assert "🎲" in text
    assert "🤝" in text


@pytest.mark.parametrize("locale", LANGUAGES)
def test_the_result_names_whom_it_did_not_rate(locale: str) -> None:
    """#38: a counted game says which new player it did not rate and which
    pair's result against each other did not count; a game of new players
    only says why it moved nothing."""
    from tables.ratings import Settlement

    g = final_state("chuvash", 2, 3, steps=10_000)
    v = engine.public_view(g)
    s = replace(_settled(), fresh=(2,), capped=((0, 1),))
    text = render_game_over(v, locale=locale, names=NAMES, settlement=s)[0]
    fresh = next(x for x in text.splitlines() if x.startswith("🆕"))
    assert "Player2" in fresh
    capped = next(x for x in text.splitlines() if x.startswith("⏸"))
    assert "Player0" in capped
    assert "Player1" in capped
    new = Settlement("t", 1, "chuvash", False, "new_players")
    text = render_game_over(v, locale=locale, names=NAMES, settlement=new)[0]
    assert "🎲" in text
    if locale == "en":
        assert "new player" in text
    # #38, the opponent-diversity guard: the pair named, or why nothing moved
    s = replace(_settled(), narrow=((0, 1),))
    text = render_game_over(v, locale=locale, names=NAMES, settlement=s)[0]
    narrow = next(x for x in text.splitlines() if x.startswith("🤝"))
    assert "Player0" in narrow
    assert "Player1" in narrow
    alone = Settlement("t", 1, "chuvash", False, "pair_diversity")
    text = render_game_over(v, locale=locale, names=NAMES, settlement=alone)[0]
    assert "🎲" in text
    if locale == "en":
        assert "a few other people" in text


def _settled(counted: bool = True, why: str = "", offences: dict[int, float] | None = None) -> Any:
    from tables.ratings import Change, Settlement

    changes = (Change(11, 0, 1000, 1102, True, 1), Change(12, 1, 1000, 905, True, 1))
    return Settlement("t", 1, "chuvash", counted, why, changes if counted else (), offences or {})


@pytest.mark.parametrize("locale", LANGUAGES)
def test_the_result_shows_each_rating_change_or_why_it_did_not_count(locale: str) -> None:
    """#25: «Player0 1102? (+102)» best first; a game past the farming guard says
    why it moved nothing; to the reader who walked away, his cooldown."""
    g = final_state("chuvash", 2, 3, steps=10_000)
    v = engine.public_view(g)
    text, _kb = render_game_over(v, locale=locale, names=NAMES, settlement=_settled())
    assert "Player0 1102? (+102)" in text
    assert "Player1 905? (−95)" in text
    assert text.index("Player0 1102?") < text.index("Player1 905?")
    capped = render_game_over(
        v, locale=locale, names=NAMES, settlement=_settled(False, "pair_limit")
    )[0]
    assert "(+" not in capped
    if locale == "en":
        assert "only a few times a day" in capped
    casual = render_game_over(v, locale=locale, names=NAMES, settlement=_settled(False, "casual"))
    assert casual[0] == render_game_over(v, locale=locale, names=NAMES)[0]  # nothing to say
    mine = engine.view(g, 1)
    walked = _settled(offences={12: 600.0})
    own = render_game_over(mine, locale=locale, names=NAMES, settlement=walked)[0]
    other = render_game_over(engine.view(g, 0), locale=locale, names=NAMES, settlement=walked)[0]
    assert "⏳" in own  # told to him ...
    assert "⏳" not in other  # ... alone
    if locale == "en":
        assert "in 10 min" in own
    warned = render_game_over(
        mine, locale=locale, names=NAMES, settlement=_settled(offences={12: 0.0})
    )[0]
    assert "⚠" in warned


@pytest.mark.parametrize("locale", LANGUAGES)
def test_the_table_tells_whose_time_ran_out_and_he_is_told_himself(locale: str) -> None:
    """#25: a seat whose time ran out once is named on the table (the next
    timeout gives it to the AI); the player himself is told in a message of its
    own (Publisher.nudge), which his hand does not repeat (#41: it was said
    twice)."""
    g = final_state("chuvash", 3, 5, steps=5)
    pv = engine.public_view(g)
    text, _kb = render_table(pv, locale=locale, names=NAMES, warned=[1])
    line = next(x for x in text.splitlines() if x.startswith("⏰"))
    assert "Player1" in line
    assert "Player0" not in line
    his, _kb = render_hand(
        engine.view(g, 1), locale=locale, names=NAMES, game_id=GID, version=3, warned=[1]
    )
    assert not [x for x in his.splitlines() if x.startswith("⏰")]
    clean, _kb = render_table(pv, locale=locale, names=NAMES)
    assert "⏰" not in clean
    rated, _kb = render_table(pv, locale=locale, names=NAMES, ratings=["1240", "1010?", "990"])
    assert "Player1 · 1010?" in rated


@pytest.mark.parametrize("locale", LANGUAGES)
def test_rating_message_says_ratings_reliability_and_cooldown(locale: str) -> None:
    from tables.ratings import PlayerRatings, Rating

    me = PlayerRatings(
        user=1,
        name="Ann",
        ratings={"chuvash": Rating(28.0, 3.0, 40), "shchelkovsky": Rating(25.0, 7.0, 4)},
        reliability=0.95,
        recent=20,
        cooldown_until=1_000_000 + 600_000,
        offences=2,
    )
    text = render_ratings(me, "<Ann>", locale=locale, now_ms=1_000_000)
    assert "&lt;Ann&gt;" in text
    assert f"{Rating(28.0, 3.0, 40).shown}" in text
    assert f"{Rating(25.0, 7.0, 4).shown}?" in text
    assert "95%" in text
    assert "⏳" in text
    if locale == "en":
        assert "in 10 min" in text
    later = render_ratings(me, "Ann", locale=locale, now_ms=1_000_000 + 600_001)
    assert "⏳" not in later
    new = PlayerRatings(2, "Bo", {}, None, 0, None, 0)
    assert "%" not in render_ratings(new, "Bo", locale=locale, now_ms=0).split("\n\n")[-2]


@pytest.mark.parametrize(
    ("locale", "line"),
    [
        (
            "en",
            "Reliability: 100% — the share of recent games you played to the end (games counted: 1)",
        ),
        ("ru", "Надёжность: 100% — столько недавних партий вы доиграли сами (учтено партий: 1)"),
        ("uk", "Надійність: 100% — стільки недавніх партій ви дограли самі (враховано партій: 1)"),
    ],
)
def test_reliability_after_one_game_reads_naturally(locale: str, line: str) -> None:
    """#41 (sandbox journeys): after his first game with people /rating said «the
    share of your last 1 games» / «столько партий из последних 1»: the count
    stands where no noun has to agree with it."""
    from tables.ratings import PlayerRatings

    me = PlayerRatings(2, "Bo", {}, 1.0, 1, None, 0)
    assert line in render_ratings(me, "Bo", locale=locale, now_ms=0).splitlines()


@pytest.mark.parametrize(
    ("locale", "words"),
    [("en", "with other people"), ("ru", "с другими людьми"), ("uk", "з іншими людьми")],
)
def test_reliability_of_nobody_yet_says_whose_games_count(locale: str, words: str) -> None:
    """#41: after a finished game against the AI, /rating said «Reliability: no
    finished games yet» -- a solo game writes no rating data; it says which
    games count."""
    from tables.ratings import PlayerRatings

    new = PlayerRatings(2, "Bo", {}, None, 0, None, 0)
    text = render_ratings(new, "Bo", locale=locale, now_ms=0)
    [line] = [x for x in text.splitlines() if x.startswith(("Reliab", "Надёж", "Надій"))]
    assert words in line


@pytest.mark.parametrize(
    ("locale", "why"),
    [("en", "once they have played"), ("ru", "когда он сыграет"), ("uk", "коли він зіграє")],
)
def test_an_empty_leaderboard_says_why_new_players_are_not_on_it(locale: str, why: str) -> None:
    """#41 (the sandbox journeys): /top in a new group said only «No rated
    games in this chat yet: /new» right after a game there, and would for
    days while everyone is new; it says why."""
    text = render_rating_top({"chuvash": [], "shchelkovsky": []}, locale=locale)
    assert "/new" in text
    assert why in text
