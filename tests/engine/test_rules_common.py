"""RULES §0, the common model: hand limit, throw-in priority, passing, end of a bout,
leaving the game, finish order, game over and draws, matches."""

from __future__ import annotations

import random

import pytest

from engine import Action, GameState, new_game, state_from_json, state_to_json
from tests.engine.rulekit import c, deal, hand, illegal, play, table


# ---------------------------------------------------------------- hand limit
def test_common_hand_limit_on_lead_and_throw() -> None:
    s = deal("chuvash", ["6C 7C 8C 6D 6H", "KS QS", "JS"])
    illegal(s, "0:L6C7C8C", "hand_limit")
    play(s, "0:L6C7C", "1:C6CKS")
    # defender holds 1 card with 1 uncovered: no throw-in fits
    assert s.priority() == -1
    illegal(s, "0:T6D", "hand_limit")


def test_common_hand_limit_counts_uncovered_cards_only() -> None:
    s = deal("chuvash", ["6C 7C 6D 6H", "KS QS JS AS", "9C"])
    play(s, "0:L6C7C", "1:C6CKS")
    # 3 cards in hand, 1 uncovered: two more may come, not three
    illegal(s, "0:T6D6H6S", "card_not_in_hand")
    play(s, "0:T6D6H")
    assert [a for a, _ in table(s)] == ["6C", "7C", "6D", "6H"]
    assert s.uncovered == 3 == s.sizes[1]


def test_common_hand_limit_applies_after_take() -> None:
    s = deal("shchelkovsky", ["7H 7C 7D 7S", "8H 2C", "9S"], "4C 5D")
    play(s, "0:L7H", "1:K")
    illegal(s, "0:T7C7D", "hand_limit")
    play(s, "0:T7C")
    assert s.phase == "lead"
    assert hand(s, 1) == ["2C", "7C", "7H", "8H"]
    assert hand(s, 0) == ["4C", "5D", "7D", "7S"]


# ---------------------------------------------------------------- priority
def test_common_priority_first_attacker_then_clockwise() -> None:
    s = deal("chuvash", ["6C 6D", "9S 10S JS QS AS", "6H 8D", "6S 7D", "AH"])
    play(s, "0:L6C", "1:C6C9S")
    assert s.priority() == 0
    assert s.to_act() == [0]
    illegal(s, "2:T6H", "not_your_priority")
    illegal(s, "3:T6S", "not_your_priority")
    play(s, "0:P")
    assert s.priority() == 2
    play(s, "2:P")
    assert s.priority() == 3
    play(s, "3:T6S")
    # a change of the table clears all passes: priority returns to the first attacker
    assert s.passed == 0
    assert s.priority() == 0


def test_common_priority_skips_players_without_a_throw() -> None:
    s = deal("chuvash", ["6C KD", "9S 10S JS QS AS", "AH", "6H 7D"])
    play(s, "0:L6C", "1:C6C9S")
    # seat 0 (KD) and seat 2 (AH) have no card of rank 6 or 9: seat 3 holds priority
    assert s.priority() == 3
    assert s.to_act() == [3]


def test_common_priority_holder_may_pass_then_bout_ends_by_itself() -> None:
    s = deal("chuvash", ["6C 6D", "9S 10S JS QS AS", "AH 8D"], "7C 7D 7H 7S 8C 8H 8S")
    play(s, "0:L6C", "1:C6C9S")
    assert s.phase == "bout"
    play(s, "0:P")
    # nobody else can throw: the engine does not wait for seat 2's pass
    assert s.phase == "lead"
    assert s.attacker == 1


def test_common_priority_take_does_not_clear_passes() -> None:
    # [interp] only a change of the table clears passes; TAKE does not.
    s = deal("chuvash", ["6C 7C 6D", "9S 8D 10D JD", "6H"], "7H 7S 8C 8H 8S 9C 9D")
    play(s, "0:L6C7C", "1:C6C9S", "0:P")
    assert s.priority() == 2
    play(s, "1:K")
    assert s.priority() == 2
    assert s.passed == 1
    illegal(s, "0:T6D", "already_passed")


# ---------------------------------------------------------------- passing
def test_common_passing_rules() -> None:
    s = deal("chuvash", ["6C 6D", "9S 10S JS", "6H 8D"], "7C 7D 7H 7S 8C")
    play(s, "0:L6C")
    illegal(s, "0:P", "throw_in_closed")
    illegal(s, "1:P", "defender_cannot_pass")
    play(s, "1:C6C9S")
    illegal(s, "1:P", "defender_cannot_pass")
    play(s, "2:P")  # [interp] a thrower who is not the priority holder may pass early
    illegal(s, "2:P", "already_passed")
    illegal(s, "2:T6H", "already_passed")
    play(s, "0:T6D")
    assert s.passed == 0  # the throw-in cleared seat 2's pass
    assert Action.pass_(2) in s.legal_actions(2)


# ---------------------------------------------------------------- end of a bout
def test_common_beaten_off_cards_go_to_discard_taken_to_defender() -> None:
    s = deal("shchelkovsky", ["7H 9C", "8H 2C 3C", "2D"], "4D 5D 6D 7D 8D 9D 10D JD")
    play(s, "0:L7H", "1:C7H8H")
    assert s.discard_cards() == [c("7H"), c("8H")]
    assert [e.detail for e in s.history if e.kind == "bout_end"] == ["beaten"]
    play(s, "1:L2C", "2:K")
    assert [e.detail for e in s.history if e.kind == "bout_end"] == ["beaten", "taken"]
    assert "2C" in hand(s, 2)


# ---------------------------------------------------------------- leaving the game
def test_common_leaving_empty_hand_takes_no_further_part() -> None:
    s = deal("chuvash", ["6D 7S", "7D 8D 8H", "6H"])
    play(s, "0:L6D", "1:C6D7D", "0:P")
    play(s, "2:T6H")  # seat 2 throws his last card; the stock is empty
    illegal(s, "2:P", "no_cards")
    assert s.legal_actions(2) == []
    play(s, "1:C6H8H", "0:T7S", "1:K")
    # out in the order the hands emptied: seat 2 first, then seat 0
    assert s.over
    assert s.out == [2, 0]
    assert s.loser == 1
    places = [(e.seat, e.detail) for e in s.history if e.kind == "out"]
    assert places == [(2, "1"), (0, "2")]


def test_common_out_player_never_acts_again_and_next_lead_skips_him() -> None:
    s = deal("chuvash", ["6C", "7C 9D", "8D 10S"])
    play(s, "0:L6C", "1:C6C7C")
    assert s.out == [0]
    assert not s.over
    # beaten off: the defender leads; he attacks the next seat that holds cards
    assert s.attacker == 1
    assert s.defender == 2
    illegal(s, "0:L6C", "player_out")
    assert s.legal_actions(0) == []
    s = play(s, "1:L9D", "2:C9D10S")  # rebinding drops mypy's narrowing of s.over
    assert s.over
    assert s.out == [0, 1]
    assert s.loser == 2


def test_common_next_leader_skips_defender_who_went_out() -> None:
    s = deal("chuvash", ["6C 8C", "7C", "9D 10H", "JH QH"])
    play(s, "0:L6C", "1:C6C7C")
    # seat 1 is out: "the defender leads" means the next seat holding cards
    assert s.out == [1]
    assert s.attacker == 2
    assert s.defender == 3


# ---------------------------------------------------------------- game over / draw
def test_common_draw_game_when_nobody_holds_cards() -> None:
    s = deal("chuvash", ["6C", "7C"])
    play(s, "0:L6C")
    assert s.phase == "bout"
    assert not s.over
    s = play(s, "1:C6C7C")  # rebinding drops mypy's narrowing of s.over
    assert s.over
    assert s.draw
    assert s.loser is None
    assert s.out == [0, 1]
    assert s.history[-1].kind == "game_over"
    assert s.history[-1].detail == "draw"
    illegal(s, "0:P", "game_over")
    assert s.to_act() == []
    assert s.legal_actions(0) == []


def test_common_game_over_only_when_stock_empty() -> None:
    s = deal("chuvash", ["6C", "7C 9C"], "AS")
    play(s, "0:L6C", "1:C6C7C")
    assert not s.over
    assert hand(s, 0) == ["AS"]
    assert s.out == []


def test_common_draw_game_multi_player_last_cards() -> None:
    s = deal("shchelkovsky", ["7H", "8H 9C", "10C"], trump="S")
    play(s, "0:L7H", "1:C7H8H", "1:L9C", "2:C9C10C")
    assert s.over
    assert s.draw
    assert s.out == [0, 1, 2]


# ---------------------------------------------------------------- match
@pytest.mark.parametrize("variant", ["chuvash", "shchelkovsky"])
@pytest.mark.parametrize("loser", [0, 2])
def test_common_match_seat_before_previous_loser_leads(variant: str, loser: int) -> None:
    g = new_game(variant, 3, seed=11, previous_loser=loser)
    assert g.attacker == (loser - 1) % 3
    assert g.defender == loser


def test_common_match_same_seed_same_deal() -> None:
    a = new_game("shchelkovsky", 4, seed="table-7")
    b = new_game("shchelkovsky", 4, seed="table-7")
    assert a == b
    assert state_from_json(state_to_json(a)) == a


def test_a_copy_has_every_field_and_shares_no_mutable_one() -> None:
    # GameState.copy assigns field by field: a field added to __slots__ and
    # forgotten there would be missing (or shared) in the copy
    state = new_game("shchelkovsky", 3, 4, {"decks": 2})
    rand = random.Random(4).random
    for _ in range(40):  # into a bout, with a table, passes and history
        seats = state.to_act()
        seat = seats[int(rand() * len(seats))]
        action = state.sample_action(seat, rand())
        assert action is not None
        state.apply(action)
    twin = state.copy()
    for name in GameState.__slots__:
        mine, theirs = getattr(state, name), getattr(twin, name)
        assert mine == theirs, name
        if isinstance(mine, list):
            assert mine is not theirs, name
    assert twin == state
