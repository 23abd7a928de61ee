"""AI players: the registry, legality over many seeded games, determinism, public
information only, and hand-built positions where the sensible move is clear."""

from __future__ import annotations

import random

import pytest

from engine import Action, from_deal, new_game, parse_card, parse_cards
from engine.ai import HeuristicPlayer, RandomPlayer, make_player
from engine.ai.base import Player
from engine.ai.heuristic import chuvash_values, cover_plan
from engine.state import GameState
from engine.variants import beaters

SHCH = {"decks": 2, "remove_joker": True}


def c(name: str) -> int:
    return parse_card(name)


def cs(*names: str) -> list[int]:
    return parse_cards(names)


def shch_stock(hands: list[list[int]], bottom: str, n: int = 60) -> list[int]:
    """A big shchelkovsky stock (top first) of cards not in ``hands``; ``bottom`` is
    the face-up trump card (S3)."""
    rest = [x for x in range(52) if all(x not in h for h in hands)] * 2
    return [*rest[:n], c(bottom)]


def play(state: GameState, players: list[Player], rng: random.Random) -> int:
    """Play to the end; every proposed action must pass ``state.check``."""
    n = 0
    while not state.over:
        seats = state.to_act()
        assert seats, "a game that is not over waits for somebody"
        seat = seats[0] if len(seats) == 1 else rng.choice(seats)
        action = players[seat].choose(state, seat)
        assert action is not None, f"{players[seat].name} found no move at seat {seat}"
        assert action.seat == seat
        state.check(action)  # raises IllegalAction if the AI proposed an illegal move
        state.apply(action)
        n += 1
        assert n < 20_000, "game does not finish"
    return n


# ------------------------------------------------------------------------ registry


def test_make_player_kinds() -> None:
    assert isinstance(make_player("random", 1), RandomPlayer)
    h = make_player("heuristic", "x")
    assert isinstance(h, HeuristicPlayer)
    assert h.name == "heuristic"


def test_make_player_unknown_kind() -> None:
    with pytest.raises(ValueError, match="unknown AI kind"):
        make_player("minimax", 0)


# ------------------------------------------------------------ legality, many games

MIXES = ["H", "HR", "RH", "HH", "HRR", "HHR", "HRHR", "HHHH", "HRRHRH"]


@pytest.mark.parametrize("variant", ["chuvash", "shchelkovsky"])
@pytest.mark.parametrize("mix", MIXES)
def test_every_proposed_action_is_legal_and_games_finish(variant: str, mix: str) -> None:
    players = max(2, len(mix))
    options = SHCH if variant == "shchelkovsky" else {}
    rng = random.Random(f"{variant}{mix}")
    for g in range(8):
        state = new_game(variant, players, f"ai:{mix}:{g}", options)
        kinds = [mix[(s + g) % len(mix)] for s in range(players)]
        ais: list[Player] = [
            make_player("heuristic" if k == "H" else "random", f"{g}:{s}")
            for s, k in enumerate(kinds)
        ]
        play(state, ais, rng)
        assert state.over
        assert state.draw or state.loser is not None


def test_four_decks_ten_players_legal() -> None:
    # S1/S2: 4 decks, up to 10 players
    rng = random.Random(3)
    for g in range(3):
        state = new_game("shchelkovsky", 10, f"ten:{g}", {"decks": 4, "remove_joker": False})
        ais: list[Player] = [HeuristicPlayer(f"{g}:{s}") for s in range(10)]
        play(state, ais, rng)


def test_heuristic_is_deterministic() -> None:
    def record(seed: str) -> list[Action]:
        state = new_game("shchelkovsky", 3, "det", SHCH)
        ais = [HeuristicPlayer(seed) for _ in range(3)]
        out = []
        rng = random.Random(0)
        while not state.over:
            seats = state.to_act()
            seat = seats[0] if len(seats) == 1 else rng.choice(seats)
            action = ais[seat].choose(state, seat)
            assert action is not None
            out.append(action)
            state.apply(action)
        return out

    assert record("a") == record("a")


def test_returns_none_when_not_to_act() -> None:
    state = new_game("chuvash", 3, 5)
    idle = next(s for s in range(3) if s not in state.to_act())
    assert HeuristicPlayer(0).choose(state, idle) is None


def test_choice_does_not_depend_on_hidden_cards() -> None:
    # Only public facts may matter: two deals that differ only in the opponent's
    # hidden cards (same counts) give the same lead.
    mine = cs("6C", "7C", "9H", "KS", "AD", "10D")
    a = from_deal(
        "chuvash", {}, [mine, cs("6D", "7D", "8D", "JH", "QH", "AS")], [], first_attacker=0
    )
    b = from_deal(
        "chuvash", {}, [mine, cs("8C", "JC", "QC", "KC", "AC", "6S")], [], first_attacker=0
    )
    assert HeuristicPlayer(1).choose(a, 0) == HeuristicPlayer(1).choose(b, 0)


# ------------------------------------------------------------------ cover planning


def test_cover_plan_does_not_waste_the_only_fitting_card() -> None:
    # C4: 10C beats 6C and 9C; 7H beats 6C only.  Covering 6C with the (cheaper)
    # 10C would leave 9C uncovered.
    beat = beaters("chuvash", None)
    values = chuvash_values()
    assert values[c("10C")] < values[c("7H")]  # so a greedy cover of 6C would take 10C
    plan = cover_plan(cs("6C", "9C"), cs("10C", "7H"), beat, values)
    assert plan is not None
    assert sorted(plan[1]) == sorted([(c("6C"), c("7H")), (c("9C"), c("10C"))])
    assert cover_plan(cs("6C", "9C"), cs("7H", "8H"), beat, values) is None


def test_chuvash_covers_with_the_cheapest_card() -> None:
    # C4/C9: 7C is the cheapest card that beats 6C (not KC, not the precious AS).
    state = from_deal(
        "chuvash",
        {},
        [cs("6C", "8D", "9D", "10D", "JD", "QD"), cs("AS", "KC", "7C", "9H", "10H", "JH")],
        cs("6H", "7H", "8H", "6S", "7S", "8S"),
        first_attacker=0,
    )
    state.apply(Action.lead(0, c("6C")))
    assert HeuristicPlayer(0).choose(state, 1) == Action.cover(1, c("6C"), c("7C"))


def test_chuvash_plans_covers_for_a_multi_card_lead() -> None:
    # C6/C9: 6C and 9C led; 10C must go on 9C because 7H cannot beat it (C4).
    state = from_deal(
        "chuvash",
        {},
        [cs("6C", "9C", "8D", "9D", "10D", "JD"), cs("10C", "7H", "QH", "KH", "AH", "AS")],
        cs("6H", "8H", "6S", "7S", "8S", "9S"),
        first_attacker=0,
    )
    state.apply(Action.lead(0, c("6C"), c("9C")))
    ai = HeuristicPlayer(0)
    first = ai.choose(state, 1)
    assert first in (Action.cover(1, c("6C"), c("7H")), Action.cover(1, c("9C"), c("10C")))
    assert first is not None
    state.apply(first)
    second = ai.choose(state, 1)
    assert second in (Action.cover(1, c("6C"), c("7H")), Action.cover(1, c("9C"), c("10C")))


def test_shchelkovsky_covers_with_the_cheapest_card() -> None:
    # S4: 7H beats 5H; trumps (spades), the joker and higher hearts are dearer.
    state = from_deal(
        "shchelkovsky",
        SHCH,
        [cs("5H", "3C", "4C", "6D", "8D", "9D"), cs("KH", "7H", "3S", "JK", "10C", "JC")],
        cs("2D", "3D", "4D", "5D", "6C", "7S"),
        first_attacker=0,
    )
    state.apply(Action.lead(0, c("5H")))
    assert HeuristicPlayer(0).choose(state, 1) == Action.cover(1, c("5H"), c("7H"))


# ------------------------------------------------------------------------- taking


def test_chuvash_takes_rather_than_spend_an_ace_early() -> None:
    # C4: only the aces beat KD here; the stock is big, so the defender takes -- and
    # (C8) before any cover, which also stops throw-ins.
    stock = [
        x
        for x in range(16, 52)
        if x not in cs("KD", "7C", "8C", "9C", "10C", "JC", "AH", "AS", "6C", "6D", "7D", "8D")
    ]
    state = from_deal(
        "chuvash",
        {},
        [cs("KD", "7C", "8C", "9C", "10C", "JC"), cs("AH", "AS", "6C", "6D", "7D", "8D")],
        stock,
        first_attacker=0,
    )
    state.apply(Action.lead(0, c("KD")))
    assert HeuristicPlayer(0).choose(state, 1) == Action.take(1)


def test_chuvash_decides_to_take_before_the_first_cover() -> None:
    # C8: 6H could be covered cheaply with 7H, but 8H only with an ace: take at once
    # rather than cover 6H and then take with throw-ins open (C10, C11).
    hands = [cs("6H", "8H", "7C", "8C", "9C", "10C"), cs("7H", "AH", "AS", "6C", "6D", "7D")]
    used = {x for h in hands for x in h}
    stock = [x for x in range(16, 52) if x not in used]
    state = from_deal("chuvash", {}, hands, stock, first_attacker=0)
    state.apply(Action.lead(0, c("6H"), c("8H")))
    assert HeuristicPlayer(0).choose(state, 1) == Action.take(1)


def test_shchelkovsky_takes_rather_than_spend_a_trump_early() -> None:
    # S4: only the trump 4S (or the joker) beats KH; the stock is full: take.
    hands = [cs("KH", "3C", "4C", "6D", "8D", "9D"), cs("4S", "JK", "2C", "5D", "6C", "7C")]
    stock = shch_stock(hands, "9S", 80)
    state = from_deal("shchelkovsky", SHCH, hands, stock, first_attacker=0)
    state.apply(Action.lead(0, c("KH")))
    assert HeuristicPlayer(0).choose(state, 1) == Action.take(1)


def test_endgame_covers_with_a_trump() -> None:
    # Stock empty (RULES §0 game over): taking only piles cards up -- cover.
    hands = [cs("KH", "3C"), cs("4S", "2C", "5D")]
    state = from_deal("shchelkovsky", SHCH, hands, [], trump=3, first_attacker=0)
    state.apply(Action.lead(0, c("KH")))
    assert HeuristicPlayer(0).choose(state, 1) == Action.cover(1, c("KH"), c("4S"))


# ----------------------------------------------------------------------- throw-ins


def test_throws_in_a_low_card_not_an_ace() -> None:
    # RULES §0 throw-in: 6 and A are on the table; 6D goes in, AD is kept.
    hands = [cs("6C", "6D", "AD", "3C", "4H", "9H"), cs("AC", "5H", "7H", "8D", "JD", "QD")]
    stock = shch_stock(hands, "9S")
    state = from_deal("shchelkovsky", SHCH, hands, stock, first_attacker=0)
    state.apply(Action.lead(0, c("6C")))
    state.apply(Action.cover(1, c("6C"), c("AC")))
    assert HeuristicPlayer(0).choose(state, 0) == Action.throw(0, c("6D"))


def test_chuvash_throws_in_a_low_card_not_an_ace() -> None:
    # C10: after a cover 6 and A are on the table; throw 6D, keep AD.
    hands = [cs("6C", "6D", "AD", "7H", "8H", "9H"), cs("AC", "KH", "QH", "JD", "10S", "QS")]
    used = {x for h in hands for x in h}
    stock = [x for x in range(16, 52) if x not in used]
    state = from_deal("chuvash", {}, hands, stock, first_attacker=0)
    state.apply(Action.lead(0, c("6C")))
    state.apply(Action.cover(1, c("6C"), c("AC")))
    assert HeuristicPlayer(0).choose(state, 0) == Action.throw(0, c("6D"))


def test_passes_when_only_precious_cards_fit() -> None:
    hands = [cs("6C", "AD", "AS", "3C", "4H", "9H"), cs("AC", "5H", "7H", "8D", "JD", "QD")]
    stock = shch_stock(hands, "9S")
    state = from_deal("shchelkovsky", SHCH, hands, stock, first_attacker=0)
    state.apply(Action.lead(0, c("6C")))
    state.apply(Action.cover(1, c("6C"), c("AC")))
    assert HeuristicPlayer(0).choose(state, 0) == Action.pass_(0)


# ------------------------------------------------------------------ leads (C6, S6)


def test_shchelkovsky_leads_a_low_card() -> None:
    hands = [cs("AS", "JK", "KH", "5C", "9D", "QC"), cs("3C", "4C", "6D", "8D", "9D", "10H")]
    stock = shch_stock(hands, "2S")
    state = from_deal("shchelkovsky", SHCH, hands, stock, first_attacker=0)
    assert HeuristicPlayer(0).choose(state, 0) == Action.lead(0, c("5C"))


def test_chuvash_leads_low_cards_and_keeps_aces() -> None:
    hands = [cs("6H", "7H", "AS", "AH", "KS", "QD"), cs("6C", "7C", "8C", "9C", "10C", "JC")]
    used = {x for h in hands for x in h}
    stock = [x for x in range(16, 52) if x not in used]
    state = from_deal("chuvash", {}, hands, stock, first_attacker=0)
    action = HeuristicPlayer(0).choose(state, 0)
    assert action is not None
    assert action.kind == "lead"
    assert c("AS") not in action.cards
    assert c("AH") not in action.cards
    assert set(action.cards) <= {c("6H"), c("7H"), c("QD")}


def test_chuvash_multi_card_lead_is_legal_and_cheap() -> None:
    # C6: several low cards of one suit, never more than the defender holds.
    hands = [cs("6S", "7S", "8S", "AH", "AD", "KC"), cs("6C", "7C")]
    state = from_deal("chuvash", {}, hands, [], first_attacker=0)
    action = HeuristicPlayer(0).choose(state, 0)
    assert action is not None
    assert action.kind == "lead"
    state.check(action)
    assert len(action.cards) == 2
    assert set(action.cards) <= set(cs("6S", "7S", "8S"))


# ----------------------------------------------------------- transfers (S8)


def test_transfers_when_covering_would_cost_a_trump() -> None:
    # S8: 5D passes the attack on (to seat 0, who holds enough cards) instead of
    # spending the joker or a trump on 5H.
    hands = [cs("5H", "3C", "4C", "6D", "8D", "9D"), cs("5D", "JK", "QS", "2C", "3D", "4H")]
    stock = shch_stock(hands, "9S")
    state = from_deal("shchelkovsky", SHCH, hands, stock, first_attacker=0)
    state.apply(Action.lead(0, c("5H")))
    assert HeuristicPlayer(0).choose(state, 1) == Action.transfer(1, c("5D"))


def test_shows_a_pass_ticket() -> None:
    # S8: showing the trump 5S sends the attack back without spending a card.
    hands = [cs("5H", "3C", "4C", "6D", "8D", "9D"), cs("5S", "KH", "QS", "2C", "3D", "4H")]
    stock = shch_stock(hands, "9S")
    state = from_deal("shchelkovsky", SHCH, hands, stock, first_attacker=0)
    state.apply(Action.lead(0, c("5H")))
    assert HeuristicPlayer(0).choose(state, 1) == Action.show_trump(1, c("5S"))


def test_cover_plan_is_exact() -> None:
    # against brute force over every assignment (tests/engine/test_cover.py: the
    # same plans as the former search, and the work bound)
    from itertools import permutations

    rng = random.Random(26)
    beat = beaters("chuvash", None)
    values = chuvash_values()
    deck = [c for c in range(52) if c >> 2 >= 4]
    feasible = 0
    for _ in range(400):
        k = rng.randint(1, 5)
        cards = rng.sample(deck, k + rng.randint(k, 9))
        attacks, hand = cards[:k], cards[k:]
        costs = [
            sum(values[c] for c in chosen)
            for chosen in permutations(hand, k)
            if all(beat[a] >> c & 1 for a, c in zip(attacks, chosen, strict=True))
        ]
        plan = cover_plan(attacks, hand, beat, values)
        if not costs:
            assert plan is None
            continue
        feasible += 1
        assert plan is not None
        assert plan[0] == min(costs)
        cost, pairs = plan
        assert [a for a, _ in pairs] == attacks
        assert len({c for _, c in pairs}) == k
        assert all(beat[a] >> c & 1 for a, c in pairs)
        assert cost == sum(values[c] for _, c in pairs)
    assert feasible > 100
