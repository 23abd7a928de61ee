"""Chuvash Rooster, rules C1-C14 of RULES.md."""

from __future__ import annotations

import itertools

import pytest

from engine import OptionsError, find_variant, new_game
from engine.cards import card_names, rank_of, suit_of
from tests.engine.rulekit import c, deal, hand, illegal, play, table

CH = find_variant("chuvash")


def beats(x: str, y: str) -> bool:
    return CH.beats(c(x), c(y), None)


# ---------------------------------------------------------------- C1 / C2 / C3
def test_c1_deck_is_36_cards_six_to_ace_no_trump() -> None:
    deck = CH.deck(CH.options({}))
    assert len(deck) == 36 == len(set(deck))
    assert sorted({card_names([x])[0][:-1] for x in deck}) == sorted(
        ["6", "7", "8", "9", "10", "J", "Q", "K", "A"]
    )
    assert "JK" not in card_names(deck)
    game = new_game("chuvash", 3, seed=7)
    assert game.trump is None
    assert game.trump_card is None
    all_cards = [x for s in range(3) for x in game.hand(s)] + game.stock_top_first()
    assert sorted(all_cards) == sorted(deck)


def test_c1_options_reject_more_decks_and_jokers() -> None:
    with pytest.raises(OptionsError) as e:
        CH.options({"decks": 2})
    assert e.value.code == "bad_option"
    with pytest.raises(OptionsError) as e:
        CH.options({"remove_joker": True})
    assert e.value.code == "bad_option"


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_c2_players_two_to_six_dealt_six_each(players: int) -> None:
    game = new_game("chuvash", players, seed=players)
    assert [len(game.hand(s)) for s in range(players)] == [6] * players
    assert len(game.stock) == 36 - 6 * players


@pytest.mark.parametrize("players", [1, 7])
def test_c2_player_count_out_of_range(players: int) -> None:
    with pytest.raises(OptionsError) as e:
        new_game("chuvash", players, seed=1)
    assert e.value.code == "bad_players"


def test_c3_suit_order_spades_hearts_diamonds_clubs() -> None:
    # Equal ranks: only a higher suit beats (C3 + C4).
    assert beats("6S", "6H")
    assert beats("6H", "6D")
    assert beats("6D", "6C")
    assert not beats("6C", "6D")
    assert not beats("6D", "6H")
    assert not beats("6H", "6S")
    assert beats("9S", "9C")
    assert not beats("9C", "9S")


# ---------------------------------------------------------------- C4
def test_c4_examples_from_the_seed() -> None:
    assert beats("KD", "8C")
    assert beats("9S", "6D")
    assert beats("10S", "8C")
    assert not beats("10S", "AC")
    assert not beats("AC", "10S")


def test_c4_ace_of_spades_beats_everything_six_of_clubs_nothing() -> None:
    deck = CH.deck(CH.options({}))
    ace, six = c("AS"), c("6C")
    assert all(CH.beats(ace, y, None) for y in deck if y != ace)
    assert not any(CH.beats(six, y, None) for y in deck)


def test_c4_ace_beaten_only_by_higher_ace() -> None:
    deck = CH.deck(CH.options({}))
    for ace in ("AC", "AD", "AH"):
        beaters = sorted(card_names([x for x in deck if CH.beats(x, c(ace), None)]))
        higher = [a for a in ("AD", "AH", "AS") if "CDHS".index(a[1]) > "CDHS".index(ace[1])]
        assert beaters == sorted(higher)


def test_c4_relation_matches_the_formula_everywhere() -> None:
    deck = CH.deck(CH.options({}))
    for x, y in itertools.product(deck, deck):
        want = (suit_of(x) == suit_of(y) and rank_of(x) > rank_of(y)) or (
            suit_of(x) > suit_of(y) and rank_of(x) >= rank_of(y)
        )
        assert CH.beats(x, y, None) == want


# ---------------------------------------------------------------- C5
C5_ORDER = ["6C", "6D", "6H", "6S", "7C", "7D", "7H", "7S", "8C", "8D"]


@pytest.mark.parametrize("i", range(len(C5_ORDER) - 1))
def test_c5_first_leader_lowest_card_rank_major_incl_7h(i: int) -> None:
    low, high = C5_ORDER[i], C5_ORDER[i + 1]
    s = deal("chuvash", [f"{high} AS", f"{low} AH", "KS KH"], first=None)
    assert s.attacker == 1
    assert s.defender == 2
    s = deal("chuvash", [f"{low} AS", f"{high} AH", "KS KH"], first=None)
    assert s.attacker == 0
    assert s.defender == 1


def test_c5_seven_of_hearts_is_between_7d_and_7s() -> None:
    s = deal("chuvash", ["7S AS", "7H AH", "QS QH"], first=None)
    assert s.attacker == 1
    s = deal("chuvash", ["7H AS", "7D AH", "QS QH"], first=None)
    assert s.attacker == 1


def test_c5_leader_not_obliged_to_play_the_low_card() -> None:
    s = deal("chuvash", ["6C AH KH", "9S 8S 7S"], first=None)
    assert s.attacker == 0
    play(s, "0:LAH")
    assert table(s) == [["AH", None]]


@pytest.mark.parametrize(("loser", "leader"), [(0, 2), (1, 0), (2, 1)])
def test_c5_later_game_seat_before_loser_leads(loser: int, leader: int) -> None:
    s = deal("chuvash", ["6C AH", "7C KS", "8C QS"], first=None, previous_loser=loser)
    assert s.attacker == leader
    assert s.defender == loser
    g = new_game("chuvash", 3, seed=5, previous_loser=loser)
    assert g.attacker == leader
    assert g.defender == loser


# ---------------------------------------------------------------- C6 / C7
def test_c6_lead_several_cards_of_one_suit() -> None:
    s = deal("chuvash", ["6C 8C 10C AH", "KS QS JS", "7D"])
    play(s, "0:L6C8C10C")
    assert table(s) == [["6C", None], ["8C", None], ["10C", None]]
    assert s.defender == 1
    assert hand(s, 0) == ["AH"]


def test_c6_lead_mixed_suits_or_same_rank_rejected() -> None:
    s = deal("chuvash", ["6C 8C 6D AH", "KS QS JS", "7D"])
    illegal(s, "0:L6C6D", "lead_one_suit")
    illegal(s, "0:L8CAH", "lead_one_suit")


def test_c6_lead_at_most_defender_hand_and_listed_subsets() -> None:
    s = deal("chuvash", ["6C 8C 10C AH", "KS QS", "7D"])
    illegal(s, "0:L6C8C10C", "hand_limit")
    leads = s.legal_actions(0)
    # clubs: 3 singles + 3 pairs; hearts: 1 single
    assert len(leads) == 7
    assert all(a.kind == "lead" and len(a.cards) <= 2 for a in leads)
    assert len({suit_of(x) for a in leads for x in a.cards if len(a.cards) == 2}) == 1


@pytest.mark.parametrize(("first", "defender"), [(0, 1), (1, 2), (2, 3), (3, 0)])
def test_c7_attack_goes_to_next_seat_clockwise(first: int, defender: int) -> None:
    s = deal("chuvash", ["6C", "7C", "8C", "9C"], first=first)
    assert s.defender == defender
    play(s, f"{first}:L{['6C', '7C', '8C', '9C'][first]}")
    assert s.defender == defender
    assert s.to_act() == [defender]


# ---------------------------------------------------------------- C8 / C9 / C10 / C11
def test_c8_immediate_take_ends_bout_nobody_throws() -> None:
    s = deal("chuvash", ["6C 7C 9D", "KS QS 6D", "7H 6H 9C"], "AC AD AH AS KC KD KH")
    illegal(s, "2:T6H", "wrong_phase")
    play(s, "0:L6C7C")
    illegal(s, "2:T6H", "throw_in_closed")
    illegal(s, "0:T6D", "card_not_in_hand")
    illegal(s, "2:P", "throw_in_closed")
    play(s, "1:K")
    # the bout ended at once: the defender took exactly the led cards
    assert s.phase == "lead"
    ends = [e for e in s.history if e.kind == "bout_end"]
    assert len(ends) == 1
    assert ends[0].detail == "taken"
    assert card_names(ends[0].cards) == ["6C", "7C"]
    assert {"6C", "7C", "KS", "QS", "6D"} <= set(hand(s, 1))
    # C12: taken -> the seat after the defender leads
    assert s.attacker == 2
    assert s.defender == 0


def test_c9_cover_in_any_order_with_beating_card() -> None:
    s = deal("chuvash", ["6C 7C QH", "KS QS 8C 6D", "JH"])
    play(s, "0:L6C7C")
    illegal(s, "1:C7C6D", "does_not_beat")
    play(s, "1:C7C8C", "1:C6CQS")
    assert table(s) == [["6C", "QS"], ["7C", "8C"]]


def test_c10_throw_in_only_after_a_cover_with_ranks_on_table() -> None:
    s = deal("chuvash", ["6C 7C QH 9D", "KS QS 8C 8D", "6H 9H"])
    play(s, "0:L6C")
    illegal(s, "2:T6H", "throw_in_closed")
    play(s, "1:C6C8C")
    # ranks on the table: 6 and 8 (the cover counts); QH, 9D are not
    assert s.priority() == 2 or s.priority() == 0
    illegal(s, "0:T9D", "rank_not_on_table")
    play(s, "0:P", "2:T6H")
    assert table(s) == [["6C", "8C"], ["6H", None]]
    assert s.passed == 0  # a throw-in clears the passes


def test_c10_cover_rank_can_be_thrown() -> None:
    s = deal("chuvash", ["6C KH", "KS QS 8C", "9H"])
    play(s, "0:L6C", "1:C6CKS", "0:TKH")
    assert table(s) == [["6C", "KS"], ["KH", None]]


def test_c11_late_take_with_throw_ins() -> None:
    s = deal("chuvash", ["6C 7C 6D 9D", "KS QS 8H 8D", "7H KH"], "AC AD AH AS")
    play(s, "0:L6C7C", "1:C6CKS", "1:K")
    assert s.taking
    assert s.phase == "bout"
    illegal(s, "1:C7CQS", "already_taking")
    play(s, "0:T6D")
    # 0 has no more matching cards; priority passes to 2
    assert s.priority() == 2
    play(s, "2:T7H")
    # hand limit reached (3 uncovered, 3 in hand): the bout ends by itself
    assert s.phase == "lead"
    assert sorted(hand(s, 1)) == sorted(["KS", "QS", "8H", "8D", "6C", "7C", "6D", "7H"])
    assert s.attacker == 2
    assert s.defender == 0


# ---------------------------------------------------------------- C12 / C13 / C14
def test_c12_beaten_off_defender_leads() -> None:
    s = deal("chuvash", ["6C 7D", "8C 9S", "10H JH"], "AC AD AH AS KC KD KH KS")
    play(s, "0:L6C", "1:C6C8C")
    assert s.phase == "lead"
    assert s.attacker == 1
    assert s.defender == 2
    assert s.discard_cards() == [c("6C"), c("8C")]


def test_c12_taken_seat_after_defender_leads() -> None:
    s = deal("chuvash", ["6C 7D", "8C 9S", "10H JH"], "AC AD AH AS KC KD KH KS")
    play(s, "0:L6C", "1:K")
    assert s.attacker == 2
    assert s.defender == 0


def test_c13_draw_order_first_attacker_then_clockwise_defender_not_last() -> None:
    s = deal("chuvash", ["6C 7D", "8C 9S", "10H JH"], "AC AD AH AS KC KD")
    play(s, "0:L6C", "1:C6C8C")
    assert hand(s, 0) == sorted(["7D", "AC", "AD", "AH", "AS", "KC"], key=c)
    assert hand(s, 1) == ["9S", "KD"]
    assert hand(s, 2) == ["10H", "JH"]
    draws = [e.seat for e in s.history if e.kind == "draw"]
    assert draws == [0, 1]


def test_c13_draw_order_from_first_attacker_wraps_clockwise() -> None:
    s = deal("chuvash", ["6C", "8C 9S", "10H JH", "QD"], "AC AD AH AS KC KD KH KS QC", first=1)
    play(s, "1:L9S", "2:K")
    # first attacker 1, then 2, 3, 0
    draws = [e.seat for e in s.history if e.kind == "draw"]
    assert draws == [1, 2, 3]
    assert len(hand(s, 1)) == 6
    assert len(hand(s, 2)) == 6
    assert hand(s, 0) == ["6C"]
    assert len(hand(s, 3)) == 2


def test_c14_last_player_with_cards_is_the_rooster() -> None:
    s = deal("chuvash", ["6C", "7C 8C"])
    play(s, "0:L6C", "1:C6C7C")
    assert s.over
    assert s.loser == 1
    assert not s.draw
    assert s.out == [0]
    assert s.history[-1].kind == "game_over"
    assert s.history[-1].detail == "loser"
    assert CH.loser_title == "rooster"
