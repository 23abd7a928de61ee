"""The defender's cover plan (:mod:`engine.ai.cover`, C9 / S9, #38 point 19).

``cover_plan`` used to be an exact depth-first search, about factorial when many
attack cards share their cheapest beaters (a 10-card Shchelkovsky bout: seconds on
the event loop).  It is now the Hungarian method; the former search, kept as
``reference_cover_plan`` (with a node count), is the oracle: the same plans, for
a bounded amount of work."""

from __future__ import annotations

from hypothesis import HealthCheck, given
from hypothesis import strategies as st

from engine.ai.cover import cover_plan, cover_plan_steps, reference_cover_plan
from engine.ai.values import chuvash_values, shchelkovsky_values
from engine.cards import JOKER, Card, parse_cards, rank_of
from engine.variants import beaters
from tests.profiles import budget


def step_bound(attacks: list[Card], hand: list[Card]) -> int:
    """The documented bound of ``cover_plan_steps``: k (k + 1) / 2 rounds' worth
    of scans of the m <= len(hand) candidate cards."""
    k = len(attacks)
    return k * (k + 1) // 2 * len(hand)


# -------------------------------------------------------------------- the worst case

SHCH_BEAT = beaters("shchelkovsky", 3)  # spades are trumps
SHCH_VALUES = shchelkovsky_values(3, True)
# ten low plain cards whose cheapest beaters are all the same low trumps: every
# assignment of those trumps costs the same, so the old search's bound cut nothing
WORST_ATTACKS = parse_cards(["2H", "3H", "4H", "5H", "6H", "2D", "3D", "4D", "5D", "6D"])
WORST_HAND = parse_cards(["2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "10S", "JS", "QS", "KS"])


def test_a_ten_card_cover_takes_polynomial_work() -> None:
    # the old search visited 64,242 / 583,211 / 5,872,422 nodes here (10 cards:
    # seconds on the event loop); the Hungarian method looks at a few hundred
    # reduced costs, within its bound
    for k in (8, 9, 10):
        attacks = WORST_ATTACKS[:k]
        plan, steps = cover_plan_steps(attacks, WORST_HAND, SHCH_BEAT, SHCH_VALUES)
        assert plan is not None
        # the k cheapest trumps, whatever their order
        cheapest = sorted(WORST_HAND, key=lambda c: SHCH_VALUES[c])[:k]
        assert sorted(c for _, c in plan[1]) == sorted(cheapest)
        assert plan[0] == sum(SHCH_VALUES[c] for c in cheapest)
        bound = step_bound(attacks, WORST_HAND)
        assert steps <= bound, (k, steps, bound)
    # the same bound would not have let the old search finish: it is still
    # looking (its node budget spent) at 100 times the Hungarian method's bound
    cap = 100 * step_bound(WORST_ATTACKS, WORST_HAND)
    _, nodes = reference_cover_plan(
        WORST_ATTACKS, WORST_HAND, SHCH_BEAT, SHCH_VALUES, max_nodes=cap
    )
    assert nodes == cap


def test_a_ten_card_cover_with_repeated_cards_stays_bounded() -> None:
    # four decks: every attack card and every trump twice over
    attacks = parse_cards(["2H", "2H", "3H", "3H", "4H", "4H", "2D", "2D", "3D", "3D"])
    hand = parse_cards(["2S", "2S", "3S", "3S", "4S", "4S", "5S", "5S", "6S", "6S", "7S", "JK"])
    plan, steps = cover_plan_steps(attacks, hand, SHCH_BEAT, SHCH_VALUES)
    assert plan is not None
    assert JOKER not in [c for _, c in plan[1]]
    assert steps <= step_bound(attacks, hand)


# -------------------------------------------------------- same plans as the old search

CHUVASH_BEAT = beaters("chuvash", None)
CHUVASH_DECK = [c for c in range(52) if rank_of(c) >= 4]
SHCH_DECK = [*range(52), JOKER]


@st.composite
def positions(draw: st.DrawFn) -> tuple[list[Card], list[Card], tuple[int, ...], tuple[float, ...]]:
    """A small random cover problem: chuvash (one deck) or shchelkovsky (up to
    four decks, a random trump or none, jokers), up to 6 attack cards."""
    k = draw(st.integers(1, 6))
    n = k + draw(st.integers(0, 9))
    if draw(st.booleans()):
        cards = draw(
            st.lists(st.sampled_from(CHUVASH_DECK), min_size=k + n, max_size=k + n, unique=True)
        )
        return cards[:k], cards[k:], CHUVASH_BEAT, chuvash_values()
    trump = draw(st.sampled_from([None, 0, 1, 2, 3]))
    # few distinct cards, so that beaters are shared and repeated
    pool = draw(st.lists(st.sampled_from(SHCH_DECK), min_size=3, max_size=14, unique=True))
    cards = draw(st.lists(st.sampled_from(pool), min_size=k + n, max_size=k + n))
    values = shchelkovsky_values(trump, draw(st.booleans()))
    return cards[:k], cards[k:], beaters("shchelkovsky", trump), values


@budget(3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(positions())
def test_cover_plan_is_the_old_exact_search(
    position: tuple[list[Card], list[Card], tuple[int, ...], tuple[float, ...]],
) -> None:
    attacks, hand, beat, values = position
    plan, steps = cover_plan_steps(attacks, hand, beat, values)
    old, _ = reference_cover_plan(attacks, hand, beat, values)
    # the same cost, and the same plan: its ties broken as the search broke them
    assert plan == old
    assert cover_plan(attacks, hand, beat, values) == plan
    assert steps <= step_bound(attacks, hand)
    if plan is not None:
        assert sorted(a for a, _ in plan[1]) == sorted(attacks)
        assert [a for a, _ in plan[1]] == attacks
        assert all(beat[a] >> c & 1 for a, c in plan[1])
        used = sorted(c for _, c in plan[1])
        assert all(used.count(c) <= hand.count(c) for c in used)
        assert plan[0] == sum(values[c] for _, c in plan[1])
