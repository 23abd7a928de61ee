"""Game records (issue #16): ``make_record`` writes a played game out,
``python -m engine replay`` replays it step by step to the same end; a record
whose seed does not match its commitment or deal is refused."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from engine import new_game
from engine.__main__ import main
from engine.verify import make_record, record_states


def played(variant: str, players: int, seed: int) -> tuple[dict[str, Any], Any]:
    state = new_game(variant, players, seed)
    rng = random.Random(seed)
    moves = []
    while not state.over:
        seat = rng.choice(state.to_act())
        action = rng.choice(state.legal_actions(seat))
        state.apply(action)
        moves.append((seat, action.text()))
    record = make_record(
        seed=seed,
        variant=variant,
        options={},
        players=players,
        previous_loser=None,
        actions=moves,
    )
    return record, state


@pytest.mark.parametrize(("variant", "players"), [("chuvash", 3), ("shchelkovsky", 2)])
def test_replay_cli_prints_each_step(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], variant: str, players: int
) -> None:
    seed = random.randrange(2**62)
    record, final = played(variant, players, seed)
    path = tmp_path / "game.json"
    path.write_text(json.dumps(record))
    assert main(["replay", str(path)]) == 0
    out = json.loads(capsys.readouterr().out)
    print("seed", seed)  # after reading the CLI's output: shown when a check fails
    assert out["ok"] is True
    assert out["applied"] == len(record["actions"])
    assert [s["step"] for s in out["steps"]] == list(range(len(record["actions"]) + 1))
    assert out["steps"][0]["state"]["hands"] == record["hands"]
    last = out["steps"][-1]["state"]["hands"]
    assert all(not hand for seat, hand in enumerate(last) if seat != final.loser)
    assert out["result"] == {
        "over": True,
        "out": list(final.out),
        "loser": final.loser,
        "draw": final.draw,
    }
    assert record_states(record)[-1].loser == final.loser


def test_replay_cli_refuses_a_forged_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record, _ = played("chuvash", 2, 11)
    path = tmp_path / "game.json"
    path.write_text(json.dumps({**record, "seed": "12"}))
    assert main(["replay", str(path)]) == 2
    assert "bad_commitment" in capsys.readouterr().err
    forged = {**record, "hands": [record["hands"][1], record["hands"][0]]}
    path.write_text(json.dumps(forged))
    assert main(["replay", str(path)]) == 2
    assert "bad_deal" in capsys.readouterr().err
    illegal = {**record, "actions": [record["actions"][0], record["actions"][0]]}
    path.write_text(json.dumps(illegal))
    assert main(["replay", str(path)]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] is False
    assert out["error"]["index"] == 1
    assert out["applied"] == 1
