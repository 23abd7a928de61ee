"""Golden scenario files (RULES §3) in ``scenarios/``: each is replayed through
:func:`engine.scenario.replay` and through the CLI ``python -m engine replay FILE``;
the file's own ``expect`` key says what must come out."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from engine import scenario

HERE = Path(__file__).parent
FILES = sorted((HERE / "scenarios").glob("*.json"))
ROOT = HERE.parent.parent
RULE_IDS = {f"C{i}" for i in range(1, 15)} | {f"S{i}" for i in range(1, 15)} | {"S10a"}


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def check_result(result: dict[str, Any], expect: dict[str, Any]) -> None:
    assert result["ok"] is expect["ok"]
    assert result["applied"] == expect["applied"]
    if expect["ok"]:
        assert result["error"] is None
    else:
        assert result["error"]["index"] == expect["error_index"]
        assert result["error"]["code"] == expect["error_code"]
        assert result["error"]["message"]
    for key in ("phase", "attacker", "defender", "table", "hands", "stock_count", "trump", "out"):
        assert key in result["state"]
    for key, want in expect.get("state", {}).items():
        assert result["state"][key] == want, key


def run_cli(command: str, path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "engine", command, str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )


def test_scenarios_enough_files_and_both_variants() -> None:
    assert len(FILES) >= 20
    variants = {load(p)["variant"] for p in FILES}
    assert variants == {"chuvash", "shchelkovsky"}
    kinds = {(load(p)["variant"], load(p)["expect"]["ok"]) for p in FILES}
    assert len(kinds) == 4  # legal and illegal files for both games
    cited = {r for p in FILES for r in load(p)["rules"]}
    assert {"C4", "C8", "C11", "S8", "S10", "S10a", "S13", "S14"} <= cited


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_scenario_replay(path: Path) -> None:
    data = load(path)
    assert set(data["rules"]) <= RULE_IDS | {r for r in data["rules"] if r.startswith("common_")}
    result, state = scenario.replay(data)
    check_result(result, data["expect"])
    # the result is plain JSON
    assert json.loads(json.dumps(result)) == result
    assert state.over == (result["state"]["phase"] == "over")


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_scenario_cli_replay(path: Path) -> None:
    data = load(path)
    proc = run_cli("replay", path)
    assert proc.returncode == (0 if data["expect"]["ok"] else 1), proc.stderr
    out = json.loads(proc.stdout)
    assert out == scenario.replay(data)[0]
    check_result(out, data["expect"])


def test_scenario_cli_legal_after_lead() -> None:
    path = HERE / "scenarios" / "ch_first_attacker_7h.json"
    proc = run_cli("legal", path)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out == scenario.legal(load(path))
    # seat 2 holds 8C KS: neither beats A♥ (C4), so he can only take
    assert out["legal"][2] == [{"seat": 2, "type": "take"}]
    assert out["legal"][0] == []
    assert out["legal"][1] == []


def test_scenario_cli_legal_self_throw_and_priority() -> None:
    path = HERE / "scenarios" / "sh_illegal_self_throw_hand_limit.json"
    proc = run_cli("legal", path)
    assert proc.returncode == 1  # the file ends with an illegal action
    out = json.loads(proc.stdout)
    assert out == scenario.legal(load(path))
    legal0 = out["legal"][0]
    assert {"seat": 0, "type": "throw", "cards": ["8C"]} in legal0
    assert {"seat": 0, "type": "throw", "cards": ["8D"]} in legal0
    assert {"seat": 0, "type": "cover", "attack": "8H", "card": "AH"} in legal0
    assert {"seat": 0, "type": "take"} in legal0
    assert not any(a["type"] in ("transfer", "show_trump") for a in legal0)
    assert out["legal"][1] == []
    assert out["legal"][2] == []


def test_scenario_cli_bad_file_exit_code(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"variant": "chuvash", "hands": [["ZZ"], ["6C"]]}')
    proc = run_cli("replay", bad)
    assert proc.returncode not in (0, 1)
    assert proc.stderr


BASE: dict[str, Any] = {"variant": "chuvash", "hands": [["6C"], ["7C"]]}


@pytest.mark.parametrize(
    ("extra", "code"),
    [
        ({"first_attacker": "0"}, "bad_scenario"),
        ({"previous_loser": True}, "bad_scenario"),
        ({"hands": [[6], ["7C"]]}, "bad_scenario"),
        ({"hands": "6C 7C"}, "bad_scenario"),
        ({"stock": "AS"}, "bad_scenario"),
        ({"options": [1]}, "bad_scenario"),
        ({"trump": 5}, "bad_scenario"),
        ({"actions": {}}, "bad_scenario"),
        ({"hands": [["6C"], ["ZZ"]]}, "bad_card"),
        ({"hands": [["6C"], ["2C"]]}, "bad_deal"),
        ({"variant": "poker"}, "unknown_variant"),
        ({"options": {"decks": 2}}, "bad_option"),
        ({"hands": [["6C"]]}, "bad_players"),
    ],
)
def test_scenario_malformed_file_raises_engine_error(extra: dict[str, Any], code: str) -> None:
    from engine import EngineError

    with pytest.raises(EngineError) as e:
        scenario.replay({**BASE, **extra})
    assert e.value.code == code


def test_scenario_cli_malformed_file_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**BASE, "first_attacker": "0"}))
    proc = run_cli("replay", bad)
    assert proc.returncode == 2
    assert "bad_scenario" in proc.stderr
    assert proc.stdout == ""


def test_scenario_unparseable_action_is_reported_at_its_index() -> None:
    result, _ = scenario.replay(
        {**BASE, "actions": [{"seat": 0, "type": "lead", "cards": ["6C"]}, 5]}
    )
    assert result["ok"] is False
    assert result["applied"] == 1
    assert result["error"]["index"] == 1
    assert result["error"]["code"] == "bad_action"


def test_scenario_explicit_trump_with_empty_stock() -> None:
    data = {"variant": "shchelkovsky", "hands": [["7H"], ["8S"]], "trump": "S", "first_attacker": 0}
    result, state = scenario.replay(data)
    assert result["state"]["trump"] == "S"
    assert state.trump == 3
