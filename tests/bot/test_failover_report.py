"""The fleet failover benchmark's figures (#40, ``bench/faults.py
--fleet-failover``): the first press *sent* after the master's death, its own
wait -- beside the first applied press from the death, which holds the
player's think before it."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from harness.failover_soak import FailoverSoak, keep_trace
from sandbox.fake_api import FakeTelegram, RateLimits


def soak_at(dead: float) -> FailoverSoak:
    """A soak whose master died at ``dead`` (nothing runs: only its figures)."""
    fleet: Any = SimpleNamespace(count=3, proxy=SimpleNamespace(mode="webhook"), logs=[])
    soak = FailoverSoak(
        FakeTelegram(limits=RateLimits.off()),
        fleet,
        cluster=None,  # type: ignore[arg-type]
        games=2,
        players=3,
        seconds=60,
        seed=1,
        master_after=20,
        bot_after=20,
        think=(0.5, 2.0),
    )
    soak.master_dead_at = dead
    return soak


def test_the_first_press_sent_after_the_death_is_timed_from_its_send() -> None:
    soak = soak_at(100.0)
    r = soak.failover
    # game a: before the death (not counted); then a press sent at 101 and
    # answered at 105 (it waited for the promotion) -- answered after another
    # player's press sent later (102, answered at 102.1): the first *sent* counts
    soak.applied("a", 99.0, 99.1, moved=True, answer={})
    soak.applied("a", 102.0, 102.1, moved=False, answer={})
    soak.applied("a", 101.0, 105.0, moved=True, answer={}, redrawn=105.5)
    # game b: its first press refused "unavailable" (left out, counted), the
    # next applied one is the first applied, never the first sent
    unavailable = {"text": "The game is unavailable for a moment"}
    soak.applied("b", 100.5, 100.6, moved=False, answer=unavailable)
    soak.applied("b", 102.0, 102.3, moved=True, answer={})
    assert r.sent_wait == {"a": 4.0}
    assert r.sent_shown == {"a": 4.5}
    assert r.sent_moved == {"a"}
    assert r.sent_unavailable == {"b"}
    # the figure from the death keeps its meaning: the first applied press
    assert r.first_press == pytest.approx({"a": 5.0, "b": 2.3})
    rows = dict(r.rows())
    sent = rows["first press sent after the master's death, sent -> answered (its own wait)"]
    assert str(sent).startswith("4.00-4.00 s (1 games) on the other masters"), sent
    assert "1 / 1" in str(
        rows["  of those first presses: moves / answered 'unavailable' (left out above)"]
    )


def test_a_run_keeps_every_press_for_a_diagnosis(tmp_path: Path) -> None:
    """``--keep DIR``: every press answered, on the run's clock, with the death."""
    soak = soak_at(100.0)
    soak.applied("a", 101.0, 105.0, moved=True, answer={}, redrawn=105.5)
    soak.applied("a", 106.0, 106.1, moved=False, answer={"text": "not your move"})
    keep_trace(tmp_path, soak)
    kept = [json.loads(line) for line in (tmp_path / "presses.jsonl").read_text().splitlines()]
    assert [(p["sent"], p["redrawn"], p["moved"], p["text"]) for p in kept] == [
        (101.0, 105.5, True, None),
        (106.0, None, False, "not your move"),
    ]
    assert {p["dead"] for p in kept} == {100.0}
    assert (tmp_path / "outbox.jsonl").read_text() == ""  # the fake wrote nothing
