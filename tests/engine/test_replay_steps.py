"""Replay steps (#29): a step is a move that is not a pass, with the passes
that follow it -- a Shchelkovsky game no longer steps through hundreds of
passes that show nothing new -- and the last step still shows the end."""

from __future__ import annotations

import random

import pytest

from engine.actions import PASS, Action
from engine.replay import replay_step, replay_steps
from engine.serialize import state_to_json
from tests.engine.test_records import played


@pytest.mark.slow
@pytest.mark.parametrize(("variant", "players"), [("shchelkovsky", 4), ("chuvash", 3)])
def test_steps_skip_passes_and_keep_every_state(variant: str, players: int) -> None:
    seed = random.randrange(2**62)
    print("seed", seed)
    record, final = played(variant, players, seed)
    actions = [Action.from_json(a) for a in record["actions"]]
    moves = [a for a in actions if a.kind != PASS]
    passes = len(actions) - len(moves)
    first = replay_step(record, 0)
    assert first.last == len(moves)
    assert first.action is None
    shown_passes = 0
    for k in range(1, first.last + 1):
        step = replay_step(record, k)
        assert step.action == moves[k - 1]  # never a pass
        shown_passes += step.passes
        assert 1 <= step.bout <= step.bouts
    assert shown_passes == passes  # every pass is carried by one step
    end = replay_step(record, 10**6)  # clamped
    assert end.step == end.last
    assert end.state.over
    assert end.state.loser == final.loser
    assert end.state.out == final.out
    assert list(end.bout_starts) == sorted(set(end.bout_starts))
    assert all(0 <= s < end.last for s in end.bout_starts)


@pytest.mark.parametrize(("variant", "players"), [("shchelkovsky", 4), ("chuvash", 3)])
def test_all_steps_in_one_pass_are_the_steps_one_by_one(variant: str, players: int) -> None:
    """#42: the Mini App's viewer gets every step at once, in one pass through
    the rules: each the very step ``replay_step`` gives."""
    seed = random.randrange(2**62)
    print("seed", seed)
    record, _final = played(variant, players, seed)
    steps = replay_steps(record)
    assert len(steps) == steps[0].last + 1
    for k in sorted({0, 1, 2, steps[0].last // 2, steps[0].last - 1, steps[0].last}):
        one = replay_step(record, k)
        got = steps[k]
        assert state_to_json(got.state, history=False) == state_to_json(one.state, history=False)
        assert (got.step, got.last, got.bout, got.bouts) == (
            one.step,
            one.last,
            one.bout,
            one.bouts,
        )
        assert (got.bout_starts, got.action, got.passes) == (
            one.bout_starts,
            one.action,
            one.passes,
        )
