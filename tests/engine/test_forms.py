"""Card notation (RULES §0), Action text / JSON forms (RULES §3) and option
validation: round trips and rejection of garbage."""

from __future__ import annotations

from typing import Any

import pytest

from engine import (
    Action,
    ActionFormatError,
    OptionsError,
    find_variant,
    from_deal,
    new_game,
    parse_card,
    state_from_json,
    state_to_json,
)
from engine.cards import JOKER, CardError, card_name, parse_card_run, rank_of, suit_of
from engine.errors import StateFormatError
from tests.engine.rulekit import c, play


# ---------------------------------------------------------------- cards
def test_common_cards_every_name_round_trips() -> None:
    for card in range(53):
        assert parse_card(card_name(card)) == card
    assert card_name(JOKER) == "JK"
    assert card_name(parse_card("10H")) == "10H"


@pytest.mark.parametrize(
    ("text", "rank", "suit"), [("2C", 0, 0), ("10H", 8, 2), ("AS", 12, 3), ("6D", 4, 1)]
)
def test_common_cards_rank_and_suit(text: str, rank: int, suit: int) -> None:
    assert rank_of(parse_card(text)) == rank
    assert suit_of(parse_card(text)) == suit


def test_common_cards_parse_is_lenient_on_case_and_blanks() -> None:
    assert parse_card(" as ") == parse_card("AS")
    assert parse_card("jk") == JOKER
    assert parse_card_run("6C10HJKAS") == [c("6C"), c("10H"), JOKER, c("AS")]


@pytest.mark.parametrize("text", ["", "1H", "11C", "AX", "ZZ", "10", "J", "JKR", "♠A"])
def test_common_cards_reject_garbage(text: str) -> None:
    with pytest.raises(CardError):
        parse_card(text)
    assert issubclass(CardError, ValueError)


# ---------------------------------------------------------------- actions
ACTIONS = [
    Action.lead(0, c("6C"), c("7C"), c("10C")),
    Action.lead(3, JOKER),
    Action.cover(1, c("6C"), c("KS")),
    Action.cover(1, JOKER, c("2D")),
    Action.throw(2, c("7H"), c("7D")),
    Action.transfer(1, c("10S")),
    Action.show_trump(2, c("7S")),
    Action.take(1),
    Action.pass_(4),
]


@pytest.mark.parametrize("action", ACTIONS, ids=str)
def test_common_action_text_round_trip(action: Action) -> None:
    text = action.text()
    assert Action.from_text(action.seat, text) == action
    assert len(text.encode()) <= 64


@pytest.mark.parametrize("action", ACTIONS, ids=str)
def test_common_action_json_round_trip(action: Action) -> None:
    data = action.to_json()
    assert data["seat"] == action.seat
    assert data["type"] == action.kind
    assert Action.from_json(data) == action


def test_common_action_json_matches_rules_section_3() -> None:
    assert Action.cover(1, c("6C"), c("KS")).to_json() == {
        "seat": 1,
        "type": "cover",
        "attack": "6C",
        "card": "KS",
    }
    assert Action.lead(0, c("6C"), c("7C")).to_json() == {
        "seat": 0,
        "type": "lead",
        "cards": ["6C", "7C"],
    }
    assert Action.show_trump(2, c("7S")).to_json() == {
        "seat": 2,
        "type": "show_trump",
        "card": "7S",
    }
    assert Action.take(1).to_json() == {"seat": 1, "type": "take"}


def test_common_action_longest_text_fits_callback_data() -> None:
    ten = Action.throw(0, *([c("10H")] * 10))
    assert len(ten.text()) <= 33


@pytest.mark.parametrize(
    "text", ["", "X", "L", "T", "C6C", "C6CKSAS", "R7S7H", "S", "K6C", "PX", "T1", "L6C6", "l6C"]
)
def test_common_action_text_rejects_garbage(text: str) -> None:
    with pytest.raises(ActionFormatError) as e:
        Action.from_text(0, text)
    assert e.value.code == "bad_action"


@pytest.mark.parametrize(
    ("data", "code"),
    [
        ([1, 2], "bad_action"),
        ({"type": "take"}, "bad_action"),
        ({"seat": True, "type": "take"}, "bad_action"),
        ({"seat": "0", "type": "take"}, "bad_action"),
        ({"seat": 0, "type": "jump"}, "bad_action"),
        ({"seat": 0}, "bad_action"),
        ({"seat": 0, "type": "cover", "attack": "6C"}, "bad_action"),
        ({"seat": 0, "type": "cover", "attack": "6C", "card": 5}, "bad_action"),
        ({"seat": 0, "type": "lead", "cards": "6C"}, "bad_action"),
        ({"seat": 0, "type": "lead", "cards": []}, "bad_action"),
        ({"seat": 0, "type": "lead", "cards": ["ZZ"]}, "bad_card"),
        ({"seat": 0, "type": "transfer", "card": "1S"}, "bad_card"),
        ({"seat": 0, "type": "show_trump"}, "bad_action"),
    ],
)
def test_common_action_json_rejects_garbage(data: Any, code: str) -> None:
    with pytest.raises(ActionFormatError) as e:
        Action.from_json(data)
    assert e.value.code == code


# ---------------------------------------------------------------- options / setup
@pytest.mark.parametrize(
    ("call", "code"),
    [
        (lambda: find_variant("poker"), "unknown_variant"),
        (lambda: new_game("chuvash", True, seed=1), "bad_players"),
        (lambda: new_game("chuvash", "3", seed=1), "bad_players"),  # type: ignore[arg-type]
        (lambda: new_game("chuvash", 3, seed=1, previous_loser=3), "bad_players"),
        (lambda: new_game("chuvash", 3, seed=1, options={"decks": 4}), "bad_option"),
        (lambda: new_game("shchelkovsky", 3, seed=1, options={"colour": 1}), "unknown_option"),
        (
            lambda: from_deal("chuvash", None, [[c("6C")], [c("7C")]], [], first_attacker=2),
            "bad_players",
        ),
        (lambda: from_deal("chuvash", None, [[c("6C")]], []), "bad_players"),
        # C1: no 2..5 and no jokers in chuvash; one deck: no card twice
        (lambda: from_deal("chuvash", None, [[c("2C")], [c("7C")]], []), "bad_deal"),
        (lambda: from_deal("chuvash", None, [[JOKER], [c("7C")]], []), "bad_deal"),
        (lambda: from_deal("chuvash", None, [[c("6C")], [c("7C")]], [c("6C")]), "bad_deal"),
        # S1: at most four decks of 52 cards and 2 jokers
        (lambda: from_deal("shchelkovsky", None, [[c("6C")] * 5, [c("7C")]], []), "bad_deal"),
        (lambda: from_deal("shchelkovsky", None, [[JOKER] * 9, [c("7C")]], []), "bad_deal"),
        (lambda: from_deal("shchelkovsky", None, [[99], [c("7C")]], []), "bad_deal"),
    ],
)
def test_common_options_errors(call: Any, code: str) -> None:
    with pytest.raises(OptionsError) as e:
        call()
    assert e.value.code == code


def test_common_options_do_not_constrain_an_explicit_deal() -> None:
    # RULES §3: with explicit hands the options affect only rules, not the deal
    s = from_deal("shchelkovsky", {"decks": 2}, [[JOKER] * 4, [c("7C")] * 4], [])
    assert s.hand(0) == [JOKER] * 4


def test_common_options_defaults() -> None:
    assert find_variant("chuvash").options(None).to_json() == {"decks": 1, "remove_joker": False}
    assert find_variant("shchelkovsky").options({}).to_json() == {
        "decks": 2,
        "remove_joker": True,
    }


# ---------------------------------------------------------------- state JSON
def test_common_state_json_round_trip_mid_bout() -> None:
    s = new_game("shchelkovsky", 3, seed=4)
    for _ in range(7):
        seat = s.to_act()[0]
        s.apply(s.legal_actions(seat)[-1])
    again = state_from_json(state_to_json(s))
    assert again == s
    assert state_to_json(again) == state_to_json(s)


def test_common_state_json_rejects_garbage() -> None:
    with pytest.raises(StateFormatError):
        state_from_json({"format": "nope"})
    data = state_to_json(new_game("chuvash", 2, seed=1))
    data["hands"] = ["6C ZZ", ""]
    with pytest.raises(StateFormatError):
        state_from_json(data)


def test_common_events_record_actions_in_order() -> None:
    from tests.engine.rulekit import deal

    s = deal("chuvash", ["6C", "7C"])
    events = s.apply(Action.lead(0, c("6C")))
    assert events[0].kind == "action"
    assert events[0].detail == "lead"
    play(s, "1:C6C7C")
    kinds = [e.kind for e in s.history]
    assert kinds == ["action", "action", "bout_end", "out", "out", "game_over"]


def test_sample_action_picks_exactly_the_indexed_legal_action() -> None:
    """GameState.sample_action(seat, u) == legal_actions(seat)[int(u * n)]: random
    players sample uniformly without building every C6 lead."""
    import random

    from engine import new_game

    rng = random.Random(11)
    checked = 0
    for variant, players in (("chuvash", 2), ("chuvash", 5), ("shchelkovsky", 3)):
        for seed in range(15):
            state = new_game(variant, players, seed)
            steps = 0
            while not state.over and steps < 400:
                for seat in range(players):
                    actions = state.legal_actions(seat)
                    for u in (0.0, rng.random(), 0.999999):
                        expected = actions[int(u * len(actions))] if actions else None
                        assert state.sample_action(seat, u) == expected, (variant, seed, steps)
                        checked += 1
                seat = rng.choice(state.to_act())
                state.apply(rng.choice(state.legal_actions(seat)))
                steps += 1
    assert checked > 1000
