"""The search player (issue 15): only legal actions, its budget, no hidden cards.

Randomness: hypothesis draws the variant, player count, seed and how far a game is
played before the search player decides; every failure prints them (and the
hypothesis blob).  Budgets are small: these tests check behaviour, not strength
(strength and decision time are measured by ``bench/ai.py``).
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given
from hypothesis import strategies as st

from engine import Action, GameState, from_deal, new_game, parse_card, parse_cards, view
from engine.ai import (
    ALL_KINDS,
    KINDS,
    SLOW_KINDS,
    HeuristicPlayer,
    SearchPlayer,
    make_player,
)
from engine.ai.base import Player, RandomPlayer
from engine.ai.beliefs import Beliefs
from engine.ai.determinize import Determinizer
from engine.ai.public_info import PublicInfo, deck_counts
from engine.ai.rollout import Policy, playout, random_playout
from engine.ai.search import DEFAULT_SEARCH_STOCK, EXPERT, EXPERT_SCALE, HARD, SearchConfig
from engine.errors import IllegalAction
from engine.selfplay import play_game, selfplay
from engine.state import OVER_PHASE
from tests.profiles import budget

CONFIGS: list[tuple[str, int, dict[str, Any]]] = [
    *(("chuvash", n, {}) for n in range(2, 7)),
    *(("shchelkovsky", n, {"decks": 2}) for n in range(2, 11)),
    *(("shchelkovsky", n, {"decks": 4, "remove_joker": False}) for n in (2, 5, 10)),
]


def small(seed: int | str) -> SearchPlayer:
    """A search player with a small budget (behaviour, not strength)."""
    return SearchPlayer(seed, SearchConfig(iterations=12, steps=400, playout_limit=60))


def advance(state: GameState, steps: int, seed: str) -> list[Action]:
    """Play ``steps`` random actions (fewer if the game ends); return them."""
    rng = random.Random(seed)
    ai = RandomPlayer(seed)
    done: list[Action] = []
    while state.phase != OVER_PHASE and len(done) < steps:
        seats = state.to_act()
        seat = seats[0] if len(seats) == 1 else rng.choice(seats)
        action = ai.choose(state, seat)
        assert action is not None
        state.apply(action)
        done.append(action)
    return done


config_st = st.sampled_from(CONFIGS)


@budget(0.6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=config_st, seed=st.integers(0, 10**6), steps=st.integers(0, 150))
def test_search_proposes_only_legal_actions(
    config: tuple[str, int, dict[str, Any]], seed: int, steps: int
) -> None:
    variant, players, options = config
    print(f"variant={variant} players={players} options={options} seed={seed} steps={steps}")
    state = new_game(variant, players, seed, options)
    advance(state, steps, f"legal:{seed}")
    for seat in range(players):
        action = small(seed).choose(state, seat)
        if seat in state.to_act():
            assert action is not None
            assert action.seat == seat
            state.copy().check(action)  # raises IllegalAction if it is not legal
        else:
            assert action is None


@pytest.mark.parametrize(
    ("variant", "players", "options"),
    [("chuvash", 2, {}), ("chuvash", 5, {}), ("shchelkovsky", 3, {"decks": 2})],
)
def test_search_plays_whole_games_legally(
    variant: str, players: int, options: dict[str, Any]
) -> None:
    # every move of a whole game is checked (play_game checks untrusted players)
    state = new_game(variant, players, 3, options)
    ais: list[Player] = [small(s) if s % 2 == 0 else HeuristicPlayer(s) for s in range(players)]
    result = play_game(state, ais, random.Random(3))
    assert result.finished
    assert state.draw or state.loser is not None


@pytest.mark.slow
def test_search_is_a_registered_kind() -> None:
    assert "search" in ALL_KINDS
    # offered at a table (issue 15 step 4: the bot runs it off its event loop)
    assert "search" in KINDS
    player = make_player("search", 5)
    assert isinstance(player, SearchPlayer)
    assert player.name == "search"
    report = selfplay("chuvash", 2, 2, 0, ["search", "heuristic"])
    assert set(report["loss_share_per_kind"]) == {"search", "heuristic"}


def test_expert_is_the_search_on_a_bigger_budget_off_the_event_loop() -> None:
    # #43 Deliver 4: a level above hard, a slow kind (tables.deciders: the pool)
    assert "expert" in KINDS
    assert "expert" in SLOW_KINDS
    expert, hard = make_player("expert", 5), make_player("search", 5)
    assert isinstance(expert, SearchPlayer)
    assert isinstance(hard, SearchPlayer)
    assert expert.name == "expert"
    # the levels are the search's presets: the defaults, and those on a bigger budget
    assert (
        (hard.config, expert.config)
        == (HARD, EXPERT)
        == (
            SearchConfig(),
            SearchConfig(budget_scale=EXPERT_SCALE),
        )
    )
    state = decision_state()
    seat = state.to_act()[0]
    hard.choose(state, seat)
    expert.choose(state, seat)
    assert expert.last_budget == tuple(int(b * EXPERT_SCALE) for b in hard.last_budget)
    assert expert.last_steps > hard.last_steps


# ------------------------------------------------------------------------ budgets


def decision_state() -> GameState:
    """A chuvash position with several sensible leads (so the search runs)."""
    return new_game("chuvash", 2, 11)


def test_iteration_budget_is_respected() -> None:
    for iterations in (1, 5, 40):
        player = SearchPlayer(0, SearchConfig(iterations=iterations, steps=10**9))
        state = decision_state()
        player.choose(state, state.to_act()[0])
        assert player.last_playouts <= iterations
        # one playout cannot compare candidates: the heuristic's choice, unsearched
        assert (player.last_playouts > 0) == (iterations > 1)


def test_step_budget_stops_after_the_round_that_reaches_it() -> None:
    state = decision_state()
    seat = state.to_act()[0]
    small = SearchPlayer(0, SearchConfig(iterations=10**6, steps=1))
    small.choose(state, seat)
    one_round = small.last_playouts  # one candidate per playout, one sampled deal
    assert one_round > 1
    big = SearchPlayer(0, SearchConfig(iterations=10**6, steps=2000))
    big.choose(state, seat)
    assert big.last_playouts % one_round == 0
    assert big.last_steps - 2000 < one_round * (big.config.playout_limit + 1)


def test_time_budget_reads_the_injected_clock() -> None:
    ticks = iter(range(10**6))
    state = decision_state()
    player = SearchPlayer(
        0,
        SearchConfig(
            iterations=10**6, steps=10**9, time_budget=5.0, clock=lambda: float(next(ticks))
        ),
    )
    action = player.choose(state, state.to_act()[0])
    assert action is not None
    state.check(action)
    # the deadline is tick 0 + 5; the clock is read before every playout: 1..4 pass
    assert player.last_playouts == 4


def test_time_budget_needs_a_clock() -> None:
    with pytest.raises(ValueError, match="clock"):
        SearchConfig(time_budget=1.0)
    with pytest.raises(ValueError, match="iterations"):
        SearchConfig(iterations=0)


def test_single_legal_action_costs_no_playout() -> None:
    # S4: nothing of seat 1 beats KH (no higher heart, no trump, no joker): TAKE only
    state = from_deal(
        "shchelkovsky",
        {"decks": 2},
        [cs("KH", "3C"), cs("2C", "3D")],
        [],
        trump=3,
        first_attacker=0,
    )
    state.apply(Action.lead(0, parse_card("KH")))
    player = SearchPlayer(0)
    assert player.choose(state, 1) == Action.take(1)
    assert player.last_playouts == 0


def cs(*names: str) -> list[int]:
    return parse_cards(names)


# ------------------------------------------------------------ no hidden information


def swapped_twin(
    variant: str, players: int, options: dict[str, Any], seed: int, steps: int
) -> tuple[GameState, GameState, int] | None:
    """Two games with the same public history and the same view for one seat, but
    two hidden cards (in other hands or the stock) swapped in the deal."""
    start = new_game(variant, players, seed, options)
    hands = [start.hand(s) for s in range(players)]
    stock = start.stock_top_first()
    a = start.copy()
    actions = advance(a, steps, f"twin:{seed}")
    if a.over:
        return None
    seat = a.to_act()[0]
    seen = set(hands[seat])
    for ev in a.history:
        if ev.kind in ("action", "bout_end") or (ev.kind == "draw" and ev.seat == seat):
            seen.update(ev.cards)
    if start.trump_card is not None:
        seen.add(start.trump_card)
    spots = [(s, i) for s in range(players) if s != seat for i in range(len(hands[s]))]
    spots += [(-1, i) for i in range(len(stock) - 1)]  # not the face-up bottom card (S3)
    hidden = [(s, i) for s, i in spots if (stock[i] if s < 0 else hands[s][i]) not in seen]
    rng = random.Random(seed)
    rng.shuffle(hidden)

    def card_at(spot: tuple[int, int]) -> int:
        s, i = spot
        return stock[i] if s < 0 else hands[s][i]

    pair = next(
        ((x, y) for x in hidden for y in hidden if card_at(x) != card_at(y) and x[0] != y[0]),
        None,
    )
    if pair is None:
        return None
    (s1, i1), (s2, i2) = pair
    c1, c2 = card_at(pair[0]), card_at(pair[1])
    hands2 = [h[:] for h in hands]
    stock2 = stock[:]
    for s, i, c in ((s1, i1, c2), (s2, i2, c1)):
        if s < 0:
            stock2[i] = c
        else:
            hands2[s][i] = c
    b = from_deal(
        variant, options, hands2, stock2, trump=start.trump, first_attacker=start.attacker
    )
    try:
        for action in actions:
            b.apply(action)
    except IllegalAction:
        return None  # the swap changed what was legal (e.g. a throw-in priority)
    if view(a, seat) != view(b, seat):
        return None
    if a.counts == b.counts and a.stock == b.stock:
        return None  # e.g. a hand card swapped with a stock card the same seat drew
    return a, b, seat


@budget(0.4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=config_st, seed=st.integers(0, 10**6), steps=st.integers(0, 120))
def test_decision_does_not_depend_on_hidden_cards(
    config: tuple[str, int, dict[str, Any]], seed: int, steps: int
) -> None:
    variant, players, options = config
    print(f"variant={variant} players={players} options={options} seed={seed} steps={steps}")
    twin = swapped_twin(variant, players, options, seed, steps)
    assume(twin is not None)
    assert twin is not None
    a, b, seat = twin
    # the beliefs about the opponents' hands (#43) are read from public play only
    beliefs_a, beliefs_b = Beliefs(seat), Beliefs(seat)
    beliefs_a.update(a)
    beliefs_b.update(b)
    assert beliefs_a.weights() == beliefs_b.weights()
    assert small(seed).choose(a, seat) == small(seed).choose(b, seat)


def test_same_seed_same_decision_and_seeds_matter() -> None:
    state = decision_state()
    seat = state.to_act()[0]
    first = small("x").choose(state, seat)
    assert first == small("x").choose(state.copy(), seat)


# ----------------------------------------------------------- determinization, playouts


@budget(0.3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=config_st, seed=st.integers(0, 10**6), steps=st.integers(0, 150))
def test_sampled_deals_keep_what_the_seat_knows(
    config: tuple[str, int, dict[str, Any]], seed: int, steps: int
) -> None:
    variant, players, options = config
    print(f"variant={variant} players={players} options={options} seed={seed} steps={steps}")
    state = new_game(variant, players, seed, options)
    advance(state, steps, f"det:{seed}")
    seat = next(iter(state.to_act()), 0)
    info = PublicInfo(seat)
    info.update(state)
    det = Determinizer(state, info)
    assert det.consistent
    sample = det.sample(random.Random(seed))
    assert sample.counts[seat] == state.counts[seat]
    assert sample.sizes == state.sizes
    assert len(sample.stock) == len(state.stock)
    if state.stock and state.trump_card is not None:
        assert sample.stock[0] == state.trump_card  # S3: the face-up card stays put
    assert [sum(row) for row in sample.counts] == sample.sizes
    total: Counter[int] = Counter(sample.stock)
    for s in range(players):
        total.update(sample.hand(s))
    for attack, cover in sample.table:
        total[attack] += 1
        if cover >= 0:
            total[cover] += 1
    for c, k in enumerate(sample.discard):
        total[c] += k
    deck = deck_counts(state)
    assert all(total[c] == deck[c] for c in range(len(deck)))
    assert view(sample, seat)["legal"] == view(state, seat)["legal"]


@pytest.mark.parametrize(("variant", "players", "options"), CONFIGS[::2])
def test_playout_policy_is_legal(variant: str, players: int, options: dict[str, Any]) -> None:
    # the policy's actions are applied unchecked in playouts: check them all here
    for g in range(3):
        state = new_game(variant, players, f"policy:{g}", options)
        policy = Policy(state, random.Random(g))
        n = 0
        while state.phase != OVER_PHASE:
            seats = state.to_act()
            seat = seats[n % len(seats)]
            state.apply(policy.choose(state, seat))  # checked
            n += 1
            assert n < 50_000
        replay = new_game(variant, players, f"policy:{g}", options)
        assert playout(replay, Policy(replay, random.Random(g)), 10) <= 10


@pytest.mark.parametrize("seed", range(6))
def test_the_seat_that_empties_the_stock_holds_the_trump_card(seed: int) -> None:
    # S3: the face-up trump card is drawn last, in sight of everybody
    state = new_game("shchelkovsky", 3, seed, {"decks": 2})
    rng = random.Random(seed)
    ai = RandomPlayer(seed)
    while state.stock:
        seats = state.to_act()
        action = ai.choose(state, seats[0] if len(seats) == 1 else rng.choice(seats))
        assert action is not None
        state.apply(action)
    drawer = next(ev.seat for ev in reversed(state.history) if ev.kind == "draw")
    assert state.trump_card is not None
    assert state.counts[drawer][state.trump_card] >= 1
    for seat in range(3):
        info = PublicInfo(seat)
        info.update(state)
        if seat != drawer:
            assert info.known_of(drawer)[state.trump_card] >= 1
            assert info.unseen[state.trump_card] == deck_counts(state)[state.trump_card] - sum(
                row[state.trump_card] for row in [info.hand, info.known_of(drawer)]
            ) - state.discard[state.trump_card] - sum(
                (a == state.trump_card) + (c == state.trump_card) for a, c in state.table
            ) - sum(info.known_of(s)[state.trump_card] for s in range(3) if s not in (seat, drawer))


@pytest.mark.parametrize(("variant", "players", "options"), CONFIGS[::4])
def test_random_playout_plays_only_legal_actions(
    variant: str, players: int, options: dict[str, Any]
) -> None:
    # the fast path applies unchecked: the same draws, every action checked, give
    # the same game
    for g in range(3):
        fast = new_game(variant, players, f"rp:{g}", options)
        n = random_playout(fast, random.Random(g))
        slow = new_game(variant, players, f"rp:{g}", options)
        rand = random.Random(g).random
        for _ in range(n):
            seats = slow.to_act()
            seat = seats[0] if len(seats) == 1 else seats[int(rand() * len(seats))]
            action = slow.sample_action(seat, rand())
            assert action is not None
            assert action in slow.legal_actions(seat) or action.kind == "lead"
            slow.apply(action)  # checked
        assert fast.over
        assert slow == fast


def test_halving_spends_the_second_half_on_the_better_half() -> None:
    state = decision_state()
    seat = state.to_act()[0]
    flat = SearchPlayer(0, SearchConfig(iterations=240, steps=10**9))
    flat.choose(state, seat)
    halving = SearchPlayer(0, SearchConfig(iterations=240, steps=10**9, halving=True))
    action = halving.choose(state, seat)
    k = len(halving.last_counts)
    assert k > 2
    assert len(set(flat.last_counts)) == 1  # flat: every candidate on every deal
    assert halving.last_playouts <= 240
    full = max(halving.last_counts)
    assert halving.last_counts[0] == full  # the heuristic's choice runs on every deal
    kept = [i for i, n in enumerate(halving.last_counts) if n == full]
    assert 2 <= len(kept) <= 1 + (k - 1) // 2
    # the dropped ones ran on the first half only and cannot be chosen
    assert all(0 < n < full for n in halving.last_counts if n != full)
    assert full > flat.last_counts[0]
    assert action in [halving.last_candidates[i] for i in kept]
    assert action == SearchPlayer(
        0, SearchConfig(iterations=240, steps=10**9, halving=True)
    ).choose(state.copy(), seat)


def test_each_variant_plays_out_with_its_policy() -> None:
    # both variants: the heuristic player's rules (the greedy policy on request)
    from engine.ai.search import DEFAULT_PLAYOUT_POLICY, PLAYOUT_POLICIES

    assert DEFAULT_PLAYOUT_POLICY == {"chuvash": "heuristic", "shchelkovsky": "heuristic"}
    assert set(DEFAULT_PLAYOUT_POLICY.values()) <= set(PLAYOUT_POLICIES)
    state = decision_state()
    seat = state.to_act()[0]
    runs = {}
    for name in (None, "heuristic", "greedy"):
        player = SearchPlayer(3, SearchConfig(iterations=60, playout_policy=name))
        runs[name] = (player.choose(state, seat), player.last_steps)
    assert runs[None] == runs["heuristic"]  # the same playouts, action for action
    assert runs[None][1] != runs["greedy"][1]
    with pytest.raises(ValueError, match="unknown playout policy"):
        SearchConfig(playout_policy="perfect")


def test_search_stock_plays_the_heuristic_while_the_stock_is_fuller() -> None:
    state = decision_state()  # the deal: 24 cards in the stock (36 - 2 x 6)
    seat = state.to_act()[0]
    early = SearchPlayer(0, SearchConfig(iterations=60, search_stock=len(state.stock) - 1))
    action = early.choose(state, seat)
    assert early.last_playouts == 0
    early.heuristic.rng.seed(f"0:{state.ply}:{seat}:h")
    assert action == early.heuristic.choose(state, seat)
    late = SearchPlayer(0, SearchConfig(iterations=60, search_stock=len(state.stock)))
    late.choose(state, seat)
    assert late.last_playouts > 0
    # the variants' own: Chuvash always searches, Shchelkovsky from 40 cards on
    assert SearchPlayer(0).config.search_stock is None
    default = SearchPlayer(0, SearchConfig(iterations=60))
    default.choose(state, seat)
    assert default.last_playouts > 0
    shch = new_game("shchelkovsky", 2, 11, {"decks": 2})
    assert len(shch.stock) > DEFAULT_SEARCH_STOCK["shchelkovsky"] == 40
    default.choose(shch, shch.to_act()[0])
    assert default.last_playouts == 0


def test_two_player_shchelkovsky_searches_on_twice_the_budget() -> None:
    from engine.ai.search import BUDGET_SCALE, DEFAULT_ITERATIONS, DEFAULT_STEPS

    assert BUDGET_SCALE == {("shchelkovsky", 2): 2.0}
    rng = random.Random(26)
    for players, scale in ((2, 2), (3, 1)):
        state = new_game("shchelkovsky", players, 26, {"decks": 2})
        while len(state.stock) > 40 or len(state.legal_actions(state.to_act()[0])) < 3:
            seat = state.to_act()[0]
            state.apply(rng.choice(state.legal_actions(seat)))
        player = SearchPlayer(1)
        player.choose(state, state.to_act()[0])
        assert player.last_budget == (DEFAULT_ITERATIONS * scale, DEFAULT_STEPS * scale)
        assert 0 < player.last_playouts <= DEFAULT_ITERATIONS * scale
        # an explicit budget is kept as it is
        small = SearchPlayer(1, SearchConfig(iterations=30, steps=900))
        small.choose(state, state.to_act()[0])
        assert small.last_budget == (30, 900)


# --------------------------------------------------------- the levels' decisions

LEVEL_POSITIONS: list[tuple[str, int, dict[str, Any], int, int | None]] = [
    ("chuvash", 2, {}, 11, 0),
    ("chuvash", 3, {}, 5, 6),
    ("shchelkovsky", 2, {"decks": 2}, 26, None),
    ("shchelkovsky", 3, {"decks": 2}, 4, None),
]
"""Positions where the search runs: (variant, players, options, deal seed, random
moves played first; ``None``: until the stock holds at most 40 cards and the seat
to act has three choices)."""


def level_position(index: int) -> GameState:
    variant, players, options, seed, moves = LEVEL_POSITIONS[index]
    state = new_game(variant, players, seed, options)
    rng = random.Random(seed)
    played = 0
    while (
        len(state.stock) > 40 or len(state.legal_actions(state.to_act()[0])) < 3
        if moves is None
        else played < moves
    ):
        state.apply(rng.choice(state.legal_actions(state.to_act()[0])))
        played += 1
    return state


@pytest.mark.parametrize(
    ("position", "kind", "seed", "action", "spent", "playouts", "steps"),
    [
        (0, "search", 7, Action(1, "lead", (41,)), (400, 12000), 184, 12288),
        (0, "expert", 0, Action(1, "lead", (40,)), (1600, 48000), 720, 48375),
        (1, "search", 0, Action(1, "cover", (42,), 41), (400, 12000), 240, 12048),
        (1, "expert", 0, Action(1, "take", ()), (1600, 48000), 960, 48010),
        (2, "search", 7, Action(0, "lead", (20,)), (800, 24000), 300, 24318),
        (2, "expert", 7, Action(0, "lead", (1,)), (3200, 96000), 1190, 96229),
        (3, "search", 0, Action(2, "lead", (26,)), (400, 12000), 96, 12570),
        (3, "expert", 0, Action(2, "lead", (1,)), (1600, 48000), 384, 48675),
    ],
)
def test_the_levels_decide_as_recorded(
    position: int,
    kind: str,
    seed: int,
    action: Action,
    spent: tuple[int, int],
    playouts: int,
    steps: int,
) -> None:
    """The product's hard (``search``) and expert levels on fixed seeds: the move,
    the budget and the work done are those recorded before the search's options
    became one config value (#39): a refactor of the search keeps its decisions."""
    state = level_position(position)
    player = make_player(kind, seed)
    assert isinstance(player, SearchPlayer)
    assert player.choose(state, state.to_act()[0]) == action
    assert (player.last_budget, player.last_playouts, player.last_steps) == (
        spent,
        playouts,
        steps,
    )
