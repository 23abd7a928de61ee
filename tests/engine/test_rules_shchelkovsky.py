"""Durak Shchelkovsky, rules S1-S14 (and S10a) of RULES.md."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from engine import Action, GameState, OptionsError, find_variant, new_game, public_view, view
from engine.cards import JOKER, card_names, suit_of
from engine.setup import reveal_trump, shchelkovsky_first_attacker
from tests.engine.rulekit import c, cards, deal, hand, illegal, play, table

SH = find_variant("shchelkovsky")
HEARTS, SPADES = 2, 3


def beats(x: str, y: str, trump: int | None = HEARTS) -> bool:
    return SH.beats(c(x), c(y), trump)


# ---------------------------------------------------------------- S1 / S2
@pytest.mark.parametrize(
    ("options", "size"),
    [
        ({}, 107),
        ({"decks": 2, "remove_joker": True}, 107),
        ({"decks": 2, "remove_joker": False}, 108),
        ({"decks": 4}, 215),
        ({"decks": 4, "remove_joker": False}, 216),
    ],
)
def test_s1_deck_sizes(options: dict[str, object], size: int) -> None:
    deck = SH.deck(SH.options(options))
    assert len(deck) == size
    decks = SH.options(options).decks
    assert deck.count(c("2C")) == decks
    assert deck.count(c("AS")) == decks
    assert deck.count(JOKER) == 2 * decks - (1 if SH.options(options).remove_joker else 0)


def test_s1_remove_joker_is_on_by_default() -> None:
    assert SH.options({}).remove_joker is True
    game = new_game("shchelkovsky", 4, seed=3)
    total = sum(len(game.hand(s)) for s in range(4)) + len(game.stock)
    assert total == 107


@pytest.mark.parametrize(
    ("options", "code"),
    [
        ({"decks": 1}, "bad_option"),
        ({"decks": 3}, "bad_option"),
        ({"decks": "2"}, "bad_option"),
        ({"decks": True}, "bad_option"),
        ({"remove_joker": "yes"}, "bad_option"),
        ({"jokers": 0}, "unknown_option"),
    ],
)
def test_s1_options_validation(options: dict[str, object], code: str) -> None:
    with pytest.raises(OptionsError) as e:
        SH.options(options)
    assert e.value.code == code


@pytest.mark.parametrize("players", [2, 5, 10])
def test_s2_players_two_to_ten_six_each(players: int) -> None:
    game = new_game("shchelkovsky", players, seed=players)
    assert [len(game.hand(s)) for s in range(players)] == [6] * players


@pytest.mark.parametrize("players", [1, 11])
def test_s2_player_count_out_of_range(players: int) -> None:
    with pytest.raises(OptionsError) as e:
        new_game("shchelkovsky", players, seed=1)
    assert e.value.code == "bad_players"


# ---------------------------------------------------------------- S3
def test_s3_top_card_goes_to_bottom_and_sets_trump() -> None:
    stock, trump = reveal_trump(cards("5H 7C 8D 9S"))
    assert card_names(stock) == ["7C", "8D", "9S", "5H"]
    assert trump == HEARTS


def test_s3_joker_on_top_goes_to_middle_next_card_shown() -> None:
    stock, trump = reveal_trump(cards("JK 5H 7C 8D 9S"))
    assert trump == HEARTS
    assert card_names(stock)[-1] == "5H"
    names = card_names(stock)
    assert names.count("JK") == 1
    assert names[0] != "JK"
    assert sorted(stock) == sorted(cards("JK 5H 7C 8D 9S"))


@pytest.mark.parametrize("text", ["JK 5H", "JK JK 5H", "JK JK JK 5H 6C"])
def test_s3_joker_reveal_terminates_on_short_stock(text: str) -> None:
    stock, trump = reveal_trump(cards(text))
    assert trump == HEARTS
    assert card_names(stock)[-1] == "5H"
    assert sorted(stock) == sorted(cards(text))


@pytest.mark.parametrize("seed", range(12))
def test_s3_new_game_trump_card_is_bottom_of_stock(seed: int) -> None:
    game = new_game("shchelkovsky", 3, seed=seed)
    assert game.trump_card is not None
    assert game.trump_card != JOKER
    assert game.stock_top_first()[-1] == game.trump_card
    assert suit_of(game.trump_card) == game.trump


def test_s3_trump_card_is_drawn_last() -> None:
    s = deal("shchelkovsky", ["6C 7D", "8C 9S"], "AC 7H")
    assert s.trump == HEARTS
    assert card_names([s.trump_card or 0]) == ["7H"]
    play(s, "0:L6C", "1:C6C8C")
    # the top card AC is drawn first, the face-up 7H last
    draws = [e for e in s.history if e.kind == "draw"]
    assert [(e.seat, card_names(e.cards)) for e in draws] == [(0, ["AC", "7H"])]
    assert s.stock == []
    assert s.trump == HEARTS


def test_s3_face_up_joker_rejected_in_explicit_deal() -> None:
    with pytest.raises(OptionsError) as e:
        deal("shchelkovsky", ["6C", "7C"], "AC JK")
    assert e.value.code == "bad_deal"


# ---------------------------------------------------------------- S4
def test_s4_plain_and_trump_beating() -> None:
    assert beats("5C", "3C")
    assert not beats("3C", "5C")
    assert beats("2H", "AC")  # any trump beats any non-trump
    assert beats("5H", "3H")
    assert not beats("3H", "5H")
    assert not beats("AC", "2H")
    assert not beats("AD", "2C")  # another plain suit never beats
    assert not beats("7C", "7C")  # identical cards never beat each other


def test_s4_joker_beats_all_but_twos() -> None:
    for y in ("AS", "AH", "3C", "KD", "3H"):
        assert beats("JK", y)
    for y in ("2C", "2D", "2H", "2S"):
        assert not beats("JK", y)


def test_s4_joker_beaten_only_by_two_or_joker() -> None:
    for x in ("2C", "2D", "2H", "2S", "JK"):
        assert beats(x, "JK")
    for x in ("AH", "AS", "KH", "3C"):
        assert not beats(x, "JK")  # not even a trump: a joker is no trump


def test_s4_exhaustive_joker_rows() -> None:
    deck = sorted(set(SH.deck(SH.options({}))))
    for trump in (0, 1, 2, 3, None):
        for x in deck:
            assert SH.beats(JOKER, x, trump) == (x == JOKER or x >> 2 != 0)
            assert SH.beats(x, JOKER, trump) == (x == JOKER or x >> 2 == 0)


# ---------------------------------------------------------------- S5
def first(hands: Sequence[str], trump: int | None = HEARTS, pick: int = 0) -> tuple[int, list[int]]:
    seen: list[int] = []

    def lot(seats: Sequence[int]) -> int:
        seen.extend(seats)
        return list(seats)[pick]

    return shchelkovsky_first_attacker([cards(h) for h in hands], trump, lot), seen


def test_s5_lowest_trump_leads() -> None:
    assert first(["5H 2C", "3H AS", "4H"]) == (1, [])
    s = deal("shchelkovsky", ["5H 2C", "3H AS", "4H"], "9C 8H", first=None)
    assert s.attacker == 1
    assert s.defender == 2


def test_s5_multi_deck_tie_compares_next_trumps() -> None:
    assert first(["3H 9H", "3H 7H", "AS"]) == (1, [])
    assert first(["3H 7H 9H", "3H 7H 8H", "2C"]) == (1, [])


def test_s5_tie_runs_out_joker_holder_wins() -> None:
    assert first(["3H 9H", "3H JK"]) == (1, [])
    assert first(["3H 9H JK", "3H 9H"]) == (0, [])
    # [interp] runs out as soon as one tied player has no further trump
    assert first(["3H 5H", "3H JK 2C"]) == (1, [])


def test_s5_full_tie_goes_to_lot() -> None:
    assert first(["3H 9H 2C", "3H 9H 4C", "5H"], pick=0) == (0, [0, 1])
    assert first(["3H 9H 2C", "3H 9H 4C", "5H"], pick=1) == (1, [0, 1])


def test_s5_several_joker_holders_lot_among_them() -> None:
    assert first(["3H JK", "3H JK", "3H 2C"], pick=1) == (1, [0, 1])


def test_s5_no_trump_lowest_non_joker_card_ties_by_lot() -> None:
    assert first(["5C JK", "3D AS", "3S"], pick=1) == (2, [1, 2])
    assert first(["JK AS", "KC"]) == (1, [])
    assert first(["4C 9S", "5D"], trump=None) == (0, [])


@pytest.mark.parametrize(("loser", "leader"), [(0, 3), (2, 1)])
def test_s5_later_game_seat_before_loser(loser: int, leader: int) -> None:
    s = deal("shchelkovsky", ["2H", "3H", "4H", "5H"], "9C", first=None, previous_loser=loser)
    assert s.attacker == leader
    assert s.defender == loser
    g = new_game("shchelkovsky", 4, seed=9, previous_loser=loser)
    assert g.attacker == leader
    assert g.defender == loser


# ---------------------------------------------------------------- S6 / S7
def test_s6_lead_exactly_one_card_joker_allowed() -> None:
    s = deal("shchelkovsky", ["7C 7D JK", "AC KC QC", "2S"], trump="H")
    illegal(s, "0:L7C7D", "lead_one_card")
    assert all(len(a.cards) == 1 for a in s.legal_actions(0))
    assert len(s.legal_actions(0)) == 3
    play(s, "0:LJK")
    assert table(s) == [["JK", None]]


@pytest.mark.parametrize(("first_seat", "defender"), [(0, 1), (4, 0), (2, 3)])
def test_s7_attack_to_the_left(first_seat: int, defender: int) -> None:
    s = deal("shchelkovsky", ["2C", "3C", "4C", "5C", "6C"], trump="H", first=first_seat)
    assert s.defender == defender


# ---------------------------------------------------------------- S8 transfer
def transfer_game() -> GameState:
    return deal(
        "shchelkovsky", ["7H 9C", "7D KC QC", "7C AD KD QD", "8S 9S"], "2C 3C", first=0
    )  # trump C


def test_s8_transfer_passes_all_cards_to_next_seat() -> None:
    s = transfer_game()
    play(s, "0:L7H", "1:R7D")
    assert s.defender == 2
    assert s.attacker == 0
    assert table(s) == [["7H", None], ["7D", None]]
    assert hand(s, 1) == ["QC", "KC"]
    assert s.to_act() == [2]


def test_s8_transfer_new_defender_may_transfer_again() -> None:
    s = deal("shchelkovsky", ["7H 9C", "7D KC QC", "7C AD KD QD", "8S 9S 10S 2H"], "2C 3C")
    play(s, "0:L7H", "1:R7D", "2:R7C")
    assert s.defender == 3
    assert len(s.table) == 3


def test_s8_transfer_hand_limit_of_new_defender() -> None:
    s = deal("shchelkovsky", ["7H 9C", "7D KC QC", "7C AD KD QD", "8S 9S"], "2C 3C")
    play(s, "0:L7H", "1:R7D")
    # seat 3 holds 2 cards, the attack would be 3 cards
    illegal(s, "2:R7C", "hand_limit")
    assert all(a.kind != "transfer" for a in s.legal_actions(2))


def test_s8_transfer_wrong_rank_and_too_late() -> None:
    s = deal("shchelkovsky", ["7H 9C KH", "7D 8D KC QC", "AD"], "2C 3C")
    play(s, "0:L7H")
    illegal(s, "1:R8D", "wrong_rank")
    illegal(s, "0:R9C", "not_defender")
    play(s, "1:C7HKC")  # KC is trump
    illegal(s, "1:R7D", "transfer_not_allowed")


def test_s8_transfer_joker_on_joker() -> None:
    s = deal("shchelkovsky", ["JK 9C", "JK KC QC", "2H AD 3D"], "2C 3C")
    play(s, "0:LJK", "1:RJK")
    assert s.defender == 2
    assert table(s) == [["JK", None], ["JK", None]]


def test_s8_transfer_chain_returns_to_first_attacker() -> None:
    s = deal("shchelkovsky", ["7H 9H 10H JH 5H", "7D 9D", "7S AD KD"], "2C 3C")
    play(s, "0:L7H", "1:R7D", "2:R7S")
    assert s.defender == 0
    assert s.attacker == 0
    play(s, "0:C7H9H")
    # S10: the first attacker now defends: priority starts at the next seat clockwise
    assert s.priority() == 1
    play(s, "1:T9D")
    assert table(s)[-1] == ["9D", None]


def test_s8_transfer_not_to_oneself_when_nobody_else_can_defend() -> None:
    # Stock empty, the attacker led his last card: no other seat can receive a
    # transfer, so the defender must cover or take (bug fix: the engine used to
    # "transfer" the attack to the defender himself).
    s = deal("shchelkovsky", ["7H", "7S 9C 10D"], trump="C")
    play(s, "0:L7H")
    assert all(a.kind != "transfer" for a in s.legal_actions(1))
    illegal(s, "1:R7S", "transfer_not_allowed")
    play(s, "1:C7H9C")
    assert s.over
    assert s.loser == 1


def test_s8_transfer_skips_seat_that_emptied_with_stock_gone() -> None:
    # RULES §0 "next" skips a seat with no cards once the stock is empty.
    s = deal("shchelkovsky", ["7H", "7S 9C 10C JC", "7D AD KD QD"], trump="C")
    play(s, "0:L7H", "1:R7S")
    assert s.defender == 2
    play(s, "2:R7D")
    assert s.defender == 1
    assert len(s.table) == 3


# ---------------------------------------------------------------- S8 pass-ticket
def ticket_game() -> GameState:
    # trump S (bottom of the stock)
    return deal("shchelkovsky", ["7H 7D 10H 5C", "7S KC 4D", "AD 9H", "2C 3C"], "4C 5S")


def test_s8_pass_ticket_sends_attack_back_card_stays_in_hand() -> None:
    s = ticket_game()
    play(s, "0:L7H", "1:S7S")
    assert s.defender == 0
    assert table(s) == [["7H", None]]
    assert "7S" in hand(s, 1)
    assert len(hand(s, 1)) == 3
    assert s.ticket == (1, c("7S"))
    # announced to everybody
    assert public_view(s)["pass_ticket"] == {"seat": 1, "card": "7S"}
    assert view(s, 3)["pass_ticket"] == {"seat": 1, "card": "7S"}
    assert s.to_act() == [0]


def test_s8_pass_ticket_new_defender_must_defend() -> None:
    s = ticket_game()
    play(s, "0:L7H", "1:S7S")
    illegal(s, "0:R7D", "must_defend")
    kinds = {a.kind for a in s.legal_actions(0)}
    assert "transfer" not in kinds
    assert "show_trump" not in kinds
    assert {"cover", "take"} <= kinds
    play(s, "0:C7H10H")
    assert table(s) == [["7H", "10H"]]


def test_s8_pass_ticket_after_transfer_goes_to_transferrer() -> None:
    s = deal("shchelkovsky", ["7H 9C", "7D KC QC 8H", "7S AD", "2C"], "4C 5S")
    play(s, "0:L7H", "1:R7D", "2:S7S")
    assert s.defender == 1
    assert table(s) == [["7H", None], ["7D", None]]


def test_s8_pass_ticket_must_be_a_trump_of_the_rank() -> None:
    s = deal("shchelkovsky", ["7H 9C", "7D 8S KC JK", "AD"], "4C 5S")
    play(s, "0:L7H")
    illegal(s, "1:S7D", "not_trump")
    illegal(s, "1:S8S", "wrong_rank")
    illegal(s, "1:SJK", "wrong_rank")
    illegal(s, "1:S7S", "card_not_in_hand")


def test_s8_pass_ticket_joker_attack_cannot_be_ticketed() -> None:
    s = deal("shchelkovsky", ["JK 9C", "JK 8S KC", "AD"], "4C 5S")
    play(s, "0:LJK")
    illegal(s, "1:SJK", "not_trump")
    assert all(a.kind != "show_trump" for a in s.legal_actions(1))


def test_s8_pass_ticket_hand_limit_of_previous_seat() -> None:
    s = deal("shchelkovsky", ["7H 9C", "7D KC", "7S AD QD", "2C 3C"], "4C 5S")
    play(s, "0:L7H", "1:R7D")
    # seat 1 now holds 1 card, the attack is 2 cards
    illegal(s, "2:S7S", "hand_limit")


# ---------------------------------------------------------------- S9 / S10 / S10a / S11
def test_s9_cover_one_card_at_a_time_beating() -> None:
    s = deal("shchelkovsky", ["7H 9C 5D", "8H 5S 10C", "AD"], "4C 5S")
    play(s, "0:L7H")
    illegal(s, "1:C7H10C", "does_not_beat")
    illegal(s, "1:C9C5S", "attack_not_on_table")
    play(s, "1:C7H5S")  # a trump covers a plain card
    assert table(s) == [["7H", "5S"]]
    illegal(s, "1:C7H8H", "attack_not_on_table")


def test_s10_throw_ins_open_after_cover_or_take() -> None:
    s = deal("shchelkovsky", ["7H 7C 8D", "8H 5S 10C QD", "7D"], "4C 5S")
    play(s, "0:L7H")
    illegal(s, "0:T7C", "throw_in_closed")
    play(s, "1:K")
    assert s.priority() == 0
    play(s, "0:T7C")
    s2 = deal("shchelkovsky", ["7H 7C 8D", "8H 5S 10C QD", "7D"], "4C 5S")
    play(s2, "0:L7H", "1:C7H8H", "0:T7C8D")  # several cards at once, ranks 7 and 8
    assert len(s2.table) == 3
    assert s2.thrown == 2


def test_s10_cap_ten_thrown_cards_per_bout() -> None:
    sevens = " ".join(["7C 7D 7H"] * 4)  # four decks: twelve plain sevens
    defender = "AS KS QS JS 10S 9S 8S AH KH QH JH 10H"
    s = deal("shchelkovsky", [f"{sevens} 2C", defender, "3C"], "4D 5D", options={"decks": 4})
    play(s, "0:L7C", "1:K")
    play(s, "0:T7C7C7C7D7D7D7D7H7H")  # nine
    assert s.thrown == 9
    illegal(s, "0:T7H7H", "throw_in_cap")
    play(s, "0:T7H")
    # cap reached: the bout ends by itself, the lead card does not count
    assert s.phase == "lead"
    assert len(hand(s, 1)) == 23
    assert s.attacker == 2


def test_s10_hand_limit_on_throw_ins() -> None:
    s = deal("shchelkovsky", ["7H 7C 7D", "8H 2C", "9S"], "4C 5S")
    play(s, "0:L7H", "1:K")
    illegal(s, "0:T7C7D", "hand_limit")
    play(s, "0:T7C")
    assert s.phase == "lead"
    assert len(hand(s, 1)) >= 4


def test_s10_priority_first_attacker_then_clockwise() -> None:
    s = deal("shchelkovsky", ["7H 8C QD", "8H 5S 10C QC", "7D 2D", "7S 3D"], "4C 5S")
    play(s, "0:L7H", "1:C7H8H")
    assert s.priority() == 0
    illegal(s, "2:T7D", "not_your_priority")
    play(s, "0:P")
    assert s.priority() == 2
    play(s, "3:P")  # [interp] a non-holder may pass early
    play(s, "2:T7D")
    assert s.priority() == 0
    assert s.passed == 0


def test_s10a_self_throw_after_pass_ticket_hand_limit_after_leaving() -> None:
    s = deal("shchelkovsky", ["8H 8D 8C AH KD", "8S 4C", "9C 3D"], "2D 5S")
    play(s, "0:L8H", "1:S8S")
    assert s.defender == 0
    assert hand(s, 0) == ["8C", "8D", "KD", "AH"]
    # size 4, 1 uncovered: two more would leave 2 cards for 3 attack cards
    illegal(s, "0:T8C8D", "hand_limit")
    throws = [a for a in s.legal_actions(0) if a.kind == "throw"]
    assert sorted(a.cards[0] for a in throws) == sorted(cards("8C 8D"))
    play(s, "0:T8D")  # no priority needed, before any cover
    assert table(s) == [["8H", None], ["8D", None]]
    assert s.thrown == 1
    illegal(s, "0:T8C", "hand_limit")
    illegal(s, "0:T9C", "card_not_in_hand")
    play(s, "0:C8HAH", "0:C8DKD")
    # seat 0 (the first attacker) defends: priority starts at seat 1, who has 8S
    assert s.phase == "bout"
    assert s.priority() == 1
    illegal(s, "0:T8C", "hand_limit")  # one card left: 1 uncovered > 0 in hand


def test_s10a_self_throw_wrong_rank_and_not_after_take() -> None:
    s = deal("shchelkovsky", ["8H 8D 9D AH KD QD JD", "8S 4C", "9C 3D"], "2D 5S")
    play(s, "0:L8H", "1:S8S")
    illegal(s, "0:T9D", "rank_not_on_table")
    play(s, "0:K")
    illegal(s, "0:T8D", "already_taking")


def test_s10a_no_self_throw_without_pass_ticket() -> None:
    s = deal("shchelkovsky", ["8H 9C", "8D 8C AH KD", "9S"], "2D 5S")
    play(s, "0:L8H")
    illegal(s, "1:T8D", "defender_cannot_throw")


def test_s10a_self_throws_count_toward_the_cap() -> None:
    own = " ".join(["8C 8D"] * 4 + ["AS KS QS"] * 4)
    s = deal(
        "shchelkovsky",
        [f"8H {own}", "8S 4C", "8H 8H 8H 3D"],
        "3C 5S",
        options={"decks": 4},
    )
    play(s, "0:L8H", "1:S8S")
    play(s, "0:T8C8C8C8C8D8D8D8D")  # eight self-thrown cards, at once
    assert s.thrown == 8
    assert len(s.table) == 9
    for attack, cover in zip(
        cards("8H 8C 8C 8C 8C 8D 8D 8D 8D"), cards("AS " * 4 + "KS " * 4 + "QS"), strict=True
    ):
        s.apply(Action.cover(0, attack, cover))
    play(s, "1:P")
    assert s.priority() == 2
    illegal(s, "2:T8H8H8H", "throw_in_cap")
    play(s, "2:T8H8H")
    assert s.thrown == 10
    assert s.priority() == -1


def test_s11_take_any_time_then_throwers_add() -> None:
    s = deal("shchelkovsky", ["7H 7C 9D", "8H 2C 3C 4D", "7D 3S"], "4C 5S")
    play(s, "0:L7H", "1:K")
    assert s.taking
    assert s.phase == "bout"
    illegal(s, "1:K", "already_taking")
    illegal(s, "1:C7H8H", "already_taking")
    play(s, "0:T7C", "0:P", "2:T7D")
    assert s.phase == "lead"
    assert {"7H", "7C", "7D"} <= set(hand(s, 1))
    assert s.attacker == 2
    assert s.defender == 0


# ---------------------------------------------------------------- S12 / S13 / S14
def test_s12_beaten_final_defender_leads_after_transfer() -> None:
    s = deal("shchelkovsky", ["7H 9C", "7D KC QC", "AH AD KD QD", "8S 9S"], "2C 3C")
    play(s, "0:L7H", "1:R7D", "2:C7HAH", "2:C7DAD")
    assert s.phase == "lead"
    assert s.attacker == 2
    assert s.defender == 3


def test_s12_taken_seat_after_final_defender_leads() -> None:
    s = deal("shchelkovsky", ["7H 9C", "7D KC QC", "AH AD KD QD", "8S 9S"], "2C 3C")
    play(s, "0:L7H", "1:R7D", "2:K")
    assert s.phase == "lead"
    assert s.attacker == 3
    assert s.defender == 0


def test_s13_draw_order_final_defender_last() -> None:
    s = deal("shchelkovsky", ["6C 7D", "8C 9S", "10H JH"], "AC AD AH AS KC KD")
    play(s, "0:L6C", "1:C6C8C")
    assert [e.seat for e in s.history if e.kind == "draw"] == [0, 2]
    assert hand(s, 0) == card_names(sorted(cards("7D AC AD AH AS KC")))
    assert hand(s, 2) == ["10H", "JH", "KD"]
    assert hand(s, 1) == ["9S"]


def test_s13_draw_order_pass_ticket_first_attacker_defends_last() -> None:
    s = deal("shchelkovsky", ["7C 9C 5H", "7D 4S", "10H JH"], "2C 2D 2H 2S 3C 3D 3H 3S 4C 4D")
    assert s.trump == 1
    play(s, "0:L7C", "1:S7D", "0:C7C9C", "1:P")
    assert s.phase == "lead"
    assert [e.seat for e in s.history if e.kind == "draw"] == [1, 2, 0]
    assert hand(s, 1) == ["2C", "2D", "2H", "2S", "4S", "7D"]
    assert hand(s, 2) == ["3C", "3D", "3H", "3S", "10H", "JH"]
    assert hand(s, 0) == ["4C", "4D", "5H"]
    assert s.attacker == 0
    assert s.defender == 1


def test_s14_last_holder_is_durak() -> None:
    s = deal("shchelkovsky", ["7H", "8H 2C"], trump="S")
    play(s, "0:L7H", "1:C7H8H")
    assert s.over
    assert s.loser == 1
    assert not s.draw
    assert s.out == [0]
    assert SH.loser_title == "durak"


def test_s14_draw_when_both_empty_at_once() -> None:
    s = deal("shchelkovsky", ["7H", "8H"], trump="S")
    play(s, "0:L7H", "1:C7H8H")
    assert s.over
    assert s.draw
    assert s.loser is None
    assert s.out == [0, 1]


def random_game(players: int, seed: int, options: dict[str, object]) -> GameState:
    rng = random.Random(seed)
    game = new_game("shchelkovsky", players, seed=seed, options=options)
    for _ in range(5000):
        if game.over:
            break
        seat = rng.choice(game.to_act())
        game.apply(rng.choice(game.legal_actions(seat)))
    assert game.over, f"seed {seed}: game did not finish"
    return game


@pytest.mark.parametrize("seed", range(15))
def test_s14_odd_card_count_never_draws(seed: int) -> None:
    game = random_game(2 + seed % 3, seed, {"decks": 2, "remove_joker": True})
    assert not game.draw, f"seed {seed}"
    assert game.loser is not None, f"seed {seed}"
    assert len(game.out) == game.players - 1
