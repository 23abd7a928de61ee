"""The arena's rules (#27, tables/arena_rules.py): scoring for every table size,
streaks, walking away, pairing without immediate rematches."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tables.arena_rules import (
    RUNNING,
    Arena,
    ArenaPlayer,
    Pairing,
    free_table,
    game_points,
    pair,
    score,
    seat,
)
from tables.records import GameResult


def result(
    places: list[int],
    loser: int | None,
    *,
    draw: bool = False,
    away: tuple[int, ...] = (),
    table: str = "T",
    ai: tuple[int, ...] = (),
) -> GameResult:
    seats = tuple((None, "AI") if s in ai else (100 + s, f"P{s}") for s in range(len(places)))
    return GameResult(
        table=table,
        game=1,
        variant="shchelkovsky",
        chat=-1,
        places=tuple(places),
        loser=loser,
        draw=draw,
        seats=seats,
        at=0,
        rated=not ai,
        away=away,
    )


def points(r: GameResult, streaks: dict[int, int] | None = None) -> list[int]:
    return [s.points for s in game_points(r, streaks or {})]


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_first_out_two_other_survivors_one_loser_nothing(n: int) -> None:
    """Every table size: the first out 2, every other player who is not the
    loser 1, the loser 0 (a 2-player game: win 2, loss 0, as on lichess)."""
    order = list(range(n))
    random.Random(n).shuffle(order)  # seat order is not place order
    places = [0] * n
    for place, s in enumerate(order, start=1):
        places[s] = place
    loser = order[-1]
    got = dict(zip(range(n), points(result(places, loser)), strict=True))
    assert got[order[0]] == 2
    assert got[loser] == 0
    assert all(got[s] == 1 for s in order[1:-1])
    assert sum(got.values()) == 2 + (n - 2)


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_a_draw_scores_one_for_everyone_and_nobody_is_first(n: int) -> None:
    r = result(list(range(1, n + 1)), None, draw=True)
    scored = game_points(r, {100 + s: 1 for s in range(n)})
    assert [s.points for s in scored] == [1] * n
    assert all(s.streak == 0 for s in scored)  # nobody finished first out


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_a_player_who_walked_away_scores_nothing(n: int) -> None:
    places = list(range(1, n + 1))
    r = result(places, n - 1, away=(0,))  # first out by place, but the AI finished for him
    scored = game_points(r, {100: 3})
    assert scored[0].points == 0
    assert scored[0].streak == 0
    assert [s.points for s in scored[1:]] == [1] * (n - 2) + [0]


def test_ai_seats_score_nothing_and_are_not_listed() -> None:
    r = result([2, 1, 3], 2, ai=(1,))
    assert [(s.user, s.points) for s in game_points(r, {})] == [(100, 1), (102, 0)]


def test_on_fire_after_two_wins_in_a_row_doubles_until_a_game_not_won() -> None:
    user = 100
    streak, got = 0, []
    # won, won, won (doubled), survived (doubled, ends it), won, lost
    for places, loser in [
        ([1, 2], 1),
        ([1, 2], 1),
        ([1, 2], 1),
        ([2, 1, 3], 2),
        ([1, 2], 1),
        ([2, 1], 0),
    ]:
        s = game_points(result(places, loser), {user: streak})[0]
        got.append((s.points, s.fire))
        streak = s.streak
    assert got == [(2, False), (2, False), (4, True), (2, True), (2, False), (0, False)]


def test_a_draw_on_fire_scores_two() -> None:
    s = game_points(result([1, 2], None, draw=True), {100: 2})[0]
    assert (s.points, s.fire, s.streak) == (2, True, 0)


@given(
    n=st.integers(2, 6),
    seed=st.integers(0, 10_000),
    streaks=st.lists(st.integers(0, 5), min_size=6, max_size=6),
)
def test_points_are_bounded_and_the_loser_never_scores(
    n: int, seed: int, streaks: list[int]
) -> None:
    rng = random.Random(seed)
    order = list(range(n))
    rng.shuffle(order)
    places = [0] * n
    for place, s in enumerate(order, start=1):
        places[s] = place
    loser = order[-1]
    scored = game_points(result(places, loser), {100 + s: streaks[s] for s in range(n)})
    for one in scored:
        assert 0 <= one.points <= 4
        assert one.points in ((0, 2, 4) if one.fire else (0, 1, 2))
    assert scored[loser].points == 0


# ------------------------------------------------------------------ pairing
def arena(players: list[ArenaPlayer], seats: int = 2) -> Arena:
    return Arena(
        id="A",
        chat=-1,
        creator=1,
        variant="shchelkovsky",
        seats=seats,
        starts=0,
        ends=3_600_000,
        status=RUNNING,
        players=tuple(players),
    )


def test_pairs_by_score_then_rating_in_tables_of_the_arena_size() -> None:
    ps = [
        ArenaPlayer(1, "a", rating=1500, score=0),
        ArenaPlayer(2, "b", rating=1400, score=6),
        ArenaPlayer(3, "c", rating=1600, score=2),
        ArenaPlayer(4, "d", rating=1300, score=2),
        ArenaPlayer(5, "e", rating=1000, score=6),
        ArenaPlayer(6, "f", rating=1000, score=0, withdrawn=True),
        ArenaPlayer(7, "g", rating=1000, score=9, table="X"),  # playing
    ]
    plan = pair(arena(ps), now=1000, patience_ms=30_000)
    assert plan.tables == [(2, 5), (3, 4)]  # 1 waits for a partner
    plan3 = pair(arena(ps, seats=3), now=1000, patience_ms=30_000)
    assert plan3.tables == [(2, 5, 3)]


def test_a_lone_remainder_waits_and_a_small_one_plays_after_patience() -> None:
    ps = [ArenaPlayer(u, f"p{u}", since=0) for u in range(1, 6)]
    assert pair(arena(ps, seats=3), now=1000, patience_ms=30_000).tables == [(1, 2, 3)]
    late = pair(arena(ps, seats=3), now=30_000, patience_ms=30_000).tables
    assert late == [(1, 2, 3), (4, 5)]
    one = [ArenaPlayer(1, "a")]
    assert pair(arena(one), now=10**9, patience_ms=0).tables == []


def test_no_immediate_rematch_while_another_opponent_waits() -> None:
    ps = [
        ArenaPlayer(1, "a", score=4, last=(2,)),
        ArenaPlayer(2, "b", score=4, last=(1,)),
        ArenaPlayer(3, "c", score=2, last=(4,)),
        ArenaPlayer(4, "d", score=2, last=(3,)),
    ]
    plan = pair(arena(ps), now=0, patience_ms=30_000)
    assert len(plan.tables) == 2
    for t in plan.tables:
        assert set(t) not in ({1, 2}, {3, 4}), plan.tables
    # only the two of them free: they play again rather than wait
    assert pair(arena(ps[:2]), now=0, patience_ms=30_000).tables == [(1, 2)]


def test_nobody_is_paired_before_the_start_or_after_the_end() -> None:
    ps = [ArenaPlayer(1, "a"), ArenaPlayer(2, "b")]
    assert pair(replace(arena(ps), status="scheduled"), 0, 0).tables == []
    assert pair(arena(ps), now=3_600_000, patience_ms=0).tables == []


def test_score_once_frees_the_players_and_keeps_their_sheet() -> None:
    a = arena([ArenaPlayer(100, "P0"), ArenaPlayer(101, "P1"), ArenaPlayer(102, "P2")])
    a = seat(a, [("T", (100, 101))], now=5)
    seated = a.player(100)
    assert seated is not None
    assert seated.table == "T"
    scored = score(a, "T", result([1, 2], 1), now=99)
    assert scored is not None
    p0, p1 = scored.player(100), scored.player(101)
    assert p0 is not None
    assert p1 is not None
    assert (p0.score, p0.games, p0.wins, p0.recent, p0.table, p0.since, p0.last) == (
        2, 1, 1, (2,), "", 99, (101,),
    )  # fmt: skip
    assert (p1.score, p1.games, p1.wins, p1.recent) == (0, 1, 0, (0,))
    assert scored.playing == ()
    assert scored.games == 1
    assert score(scored, "T", result([1, 2], 1), now=100) is None  # once
    assert [p.user for p in scored.standings()] == [100, 102, 101]


def test_a_table_that_never_played_frees_its_players_unscored() -> None:
    a = seat(arena([ArenaPlayer(1, "a"), ArenaPlayer(2, "b")]), [("T", (1, 2))], now=5)
    freed = free_table(a, "T", now=7)
    assert freed is not None
    assert all(p.waiting and p.score == 0 and p.since == 7 for p in freed.players)
    assert free_table(freed, "T", now=8) is None


def test_arena_json_round_trips() -> None:
    a = seat(
        arena([ArenaPlayer(1, "Аня", rating=1512, score=4, streak=2, recent=(2, 2)),
               ArenaPlayer(2, "b", withdrawn=True, last=(1,))]),
        [("T", (1,))],
        now=3,
    )  # fmt: skip
    assert Arena.from_json(a.to_json()) == a


def test_a_rematch_waits_while_games_run_then_plays() -> None:
    """The two just-finished players met: while other games run they wait (one
    may free a new opponent), for ``patience`` at most."""
    ps = [
        ArenaPlayer(1, "a", last=(2,), since=1000),
        ArenaPlayer(2, "b", last=(1,), since=1000),
        ArenaPlayer(3, "c", table="X"),
        ArenaPlayer(4, "d", table="X"),
    ]
    a = seat(arena(ps[:2]), [], 0).with_player(ps[2]).with_player(ps[3])
    a = replace(a, playing=(Pairing("X", (3, 4), 0),))
    assert pair(a, now=2000, patience_ms=30_000).tables == []  # X may end soon
    assert pair(a, now=31_000, patience_ms=30_000).tables == [(1, 2)]  # waited enough
    assert pair(replace(a, playing=()), now=2000, patience_ms=30_000).tables == [(1, 2)]


def test_an_operators_takeover_neither_scores_nor_costs_the_streak() -> None:
    """An operator handed Ann's seat to the AI and it played to the end: not her
    doing (``excused``), so her game counts nothing and her streak stands
    (review2: 0 points and the streak lost, as one who walked away)."""
    result = GameResult(
        table="t1",
        game=1,
        variant="chuvash",
        chat=-100,
        places=(1, 2),  # the AI went out first with her cards
        loser=1,
        draw=False,
        seats=((1, "Ann"), (2, "Bob")),
        at=0,
        rated=True,
        away=(0,),
        taken=(),
        excused=(0,),
    )
    ann, bob = game_points(result, {1: 2, 2: 1})
    assert (ann.user, ann.points, ann.streak, ann.fire) == (1, 0, 2, True)
    assert (bob.user, bob.streak) == (2, 0)  # he lost: his own game counts
    walked = replace(result, excused=())
    assert game_points(walked, {1: 2})[0].streak == 0  # his own walking away ends it
