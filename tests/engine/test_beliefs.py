"""Beliefs from play (issue #43): what an opponent did shapes the deals the search samples.

The beliefs (:mod:`engine.ai.beliefs`) are read from the public record only: the
hidden-card twin test of ``test_search.py`` checks that two games differing only
in hidden cards give the same beliefs and the same decision.  Here: the sampled
deals respect what was seen, hard facts in every sample, soft ones in the odds.
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import HealthCheck, given
from hypothesis import strategies as st

from engine import Action, GameState, from_deal, new_game, parse_card, parse_cards
from engine.ai.beliefs import Beliefs
from engine.ai.determinize import Determinizer
from engine.ai.public_info import PublicInfo, deck_counts
from engine.cards import NCARDS, RANK_MASKS, rank_of, suit_of
from tests.engine.test_search import CONFIGS, advance
from tests.profiles import budget

SAMPLES = 400


def cs(*names: str) -> list[int]:
    return parse_cards(names)


def samples(state: GameState, seat: int, beliefs: bool) -> list[GameState]:
    """``SAMPLES`` deals sampled from ``seat``'s knowledge, with or without beliefs."""
    info = PublicInfo(seat)
    info.update(state)
    weights = None
    if beliefs:
        b = Beliefs(seat)
        b.update(state)
        weights = b.weights()
    det = Determinizer(state, info, weights)
    assert det.consistent
    rng = random.Random(43)
    return [det.sample(rng) for _ in range(SAMPLES)]


def full_deal(hands: list[list[int]], bottom: str) -> GameState:
    """2-deck Shchelkovsky with these hands, the rest of the deck in the stock (in
    card order) and ``bottom`` face up at its bottom (S3: its suit is trump)."""
    deck = deck_counts(new_game("shchelkovsky", 2, 0, {"decks": 2}))[:]
    for hand in hands:
        for c in hand:
            deck[c] -= 1
    face_up = parse_card(bottom)
    deck[face_up] -= 1
    stock = [c for c in range(NCARDS) for _ in range(deck[c])] + [face_up]
    return from_deal("shchelkovsky", {"decks": 2}, hands, stock, first_attacker=0)


def taken_lead() -> GameState:
    """2-player Shchelkovsky, spades trump: seat 0 leads 3H, seat 1 (no heart, no
    trump) takes it (S11); seat 0 holds no 3, so the bout ends and seat 0 leads
    again (S12)."""
    hands = [
        cs("3H", "4C", "5C", "6C", "7D", "8D"),
        cs("2C", "2D", "9C", "10C", "QD", "KD"),
    ]
    state = full_deal(hands, "AS")
    state.apply(Action.lead(0, parse_card("3H")))
    state.apply(Action.take(1))
    assert state.phase == "lead"
    assert state.attacker == 0
    return state


def test_a_taken_and_kept_card_is_his_in_every_sample() -> None:
    state = taken_lead()
    three = parse_card("3H")
    assert all(s.counts[1][three] >= 1 for s in samples(state, 0, beliefs=True))


def test_a_suit_he_could_not_cover_lowers_his_odds_of_holding_it() -> None:
    # S11: he took 3H rather than cover it with a cheap heart: a cheap heart (and
    # every plain heart beats 3H) is less likely in his hand than uniform dealing says
    state = taken_lead()

    def hearts(beliefs: bool) -> float:
        return (
            sum(
                s.counts[1][c]
                for s in samples(state, 0, beliefs)
                for c in range(52)
                if suit_of(c) == 2 and rank_of(c) > 1
            )
            / SAMPLES
        )

    with_beliefs, uniform = hearts(True), hearts(False)
    assert uniform > 0.8  # 23 of the 95 unseen cards: about 1.4 in his 6
    assert with_beliefs < 0.6 * uniform


def skipped_thrower() -> GameState:
    """3-player Shchelkovsky: seat 0 leads 5C at seat 1, who covers with 9C; neither
    seat 0 nor seat 2 holds a 5 or a 9, so nobody may throw in (RULES §0 priority)
    and the bout is beaten off.  Seat 2 played nothing, so he draws nothing."""
    hands = [
        cs("5C", "4C", "6D", "7D", "8D", "10D"),
        cs("9C", "2C", "3C", "QH", "KH", "AH"),
        cs("2D", "3D", "4D", "JD", "QD", "KD"),
    ]
    state = full_deal(hands, "AS")
    state.apply(Action.lead(0, parse_card("5C")))
    state.apply(Action.cover(1, parse_card("5C"), parse_card("9C")))
    assert state.phase == "lead"
    assert state.discard[parse_card("9C")] == 1
    assert state.sizes[2] == 6
    return state


def test_a_seat_the_priority_rule_skipped_holds_no_table_rank_in_any_sample() -> None:
    state = skipped_thrower()
    ranks = RANK_MASKS[parse_card("5C")] | RANK_MASKS[parse_card("9C")]

    def holds_rank(sample: GameState) -> bool:
        return bool(sample.masks[2] & ranks)

    assert not any(holds_rank(s) for s in samples(state, 0, beliefs=True))
    assert any(holds_rank(s) for s in samples(state, 0, beliefs=False))


@budget(0.3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=st.sampled_from(CONFIGS), seed=st.integers(0, 10**6), steps=st.integers(0, 200))
def test_hard_beliefs_never_contradict_the_deal(
    config: tuple[str, int, dict[str, Any]], seed: int, steps: int
) -> None:
    # a weight of 0 is a certainty (RULES §0 priority): no seat holds such a card
    # unless it is known to be his (taken and kept), whatever the players did
    variant, players, options = config
    print(f"variant={variant} players={players} options={options} seed={seed} steps={steps}")
    state = new_game(variant, players, seed, options)
    advance(state, steps, f"beliefs:{seed}")
    seat = seed % players
    info = PublicInfo(seat)
    info.update(state)
    beliefs = Beliefs(seat)
    beliefs.update(state)
    for s, row in beliefs.weights().items():
        assert s != seat
        known = info.known_of(s)
        for c, w in enumerate(row):
            assert w >= 0.0
            if w == 0.0:
                assert state.counts[s][c] <= known[c], (s, c)
