"""The fake Bot API counts Telegram's flood limits as sliding windows (#28): 30
in any second overall, 20 in any minute per group, 3 in any 3 s per chat --
never the extra a token bucket's burst lets through in its first second or
minute."""

from __future__ import annotations

import random
from bisect import bisect_left

import pytest

from sandbox.fake_api import ManualClock, RateLimits
from sandbox.fake_api.limits import FakeFloodControl

GROUP = -100


def test_a_group_gets_20_in_any_minute_not_a_burst_and_its_refill() -> None:
    clock = ManualClock()
    control = FakeFloodControl(RateLimits(), clock)
    for _ in range(20):  # one a second: the chat's pace, the group's minute
        assert control.acquire(GROUP, True) == 0
        clock.advance(1.0)
    for _ in range(39):  # a bucket would have refilled 6 tokens by now
        assert control.acquire(GROUP, True) > 0
        clock.advance(1.0)
    assert clock.now == 1_059.0
    assert control.acquire(GROUP, True) == 1  # the first message leaves at 1060
    clock.advance(1.0)
    assert control.acquire(GROUP, True) == 0


def test_30_in_any_second_overall_and_3_in_any_3_s_per_chat() -> None:
    clock = ManualClock()
    control = FakeFloodControl(RateLimits(), clock)
    for chat in range(30):
        assert control.acquire(chat, False) == 0
    clock.advance(0.5)
    assert control.acquire(99, False) == 1  # a bucket: 15 refilled
    assert control.last_refusal.startswith("chat 99: overall window (30 in 1 s)")
    clock.advance(0.5)
    assert control.acquire(99, False) == 0
    for _ in range(2):
        assert control.acquire(99, False) == 0
    clock.advance(1.5)
    assert control.acquire(99, False) == 2  # a bucket: 1.5 refilled; the window: 1.5 s left
    # a test's message says which window refused, and what it held
    assert control.last_refusal == (
        "chat 99: chat window (3 in 3 s) held messages 1.500, 1.500, 1.500 s ago"
    )
    clock.advance(1.5)
    assert control.acquire(99, False) == 0


def most_in_a_window(times: list[float], seconds: float) -> int:
    """The most of ``times`` (sorted) in any window [t, t + seconds)."""
    return max(bisect_left(times, t + seconds) - i for i, t in enumerate(times))


def test_no_window_ever_holds_more_than_its_limit() -> None:
    seed = 28
    print(f"seed {seed}")
    rng = random.Random(seed)
    clock = ManualClock()
    control = FakeFloodControl(RateLimits(), clock)
    chats = [1, 2, GROUP, GROUP - 1, *range(10, 60)]
    taken: list[tuple[float, int]] = []
    for _ in range(20_000):
        chat = rng.choice(chats[:4] * 10 + chats)
        if control.acquire(chat, chat < 0) == 0:
            taken.append((clock.now, chat))
        clock.advance(rng.choice([0.0, 0.0, 0.01, 0.1, 0.5]))
    assert most_in_a_window([t for t, _ in taken], 1.0) <= 30
    for chat, seconds, limit in (
        (GROUP, 60.0, 20),
        (GROUP - 1, 60.0, 20),
        (1, 3.0, 3),
        (2, 3.0, 3),
    ):
        # each limit reached, never passed
        assert most_in_a_window([t for t, c in taken if c == chat], seconds) == limit


@pytest.mark.parametrize("counted", [True, False])
def test_ephemeral_writes_in_either_telegram_never_pass_a_window(counted: bool) -> None:
    """Public and ephemeral writes to one group (#24): counted, both share the
    group's windows; not counted, an ephemeral write fills its receiver's window
    (3 in any 3 s) and the overall one only, the group's hold the public ones."""
    seed = 24
    print(f"seed {seed}")
    rng = random.Random(seed)
    clock = ManualClock()
    control = FakeFloodControl(RateLimits(ephemeral_counted=counted), clock)
    receivers = [None, None, 1, 2, 3, 4, 5, 6, 7, 8]  # None: a public write
    taken: list[tuple[float, int | None]] = []
    for _ in range(20_000):
        receiver = rng.choice(receivers)
        if control.acquire(GROUP, True, receiver) == 0:
            taken.append((clock.now, receiver))
        clock.advance(rng.choice([0.0, 0.0, 0.01, 0.1, 0.5]))
    assert most_in_a_window([t for t, _ in taken], 1.0) <= 30
    public = [t for t, r in taken if r is None]
    group = [t for t, _ in taken] if counted else public
    assert most_in_a_window(group, 60.0) == 20
    assert most_in_a_window(group, 3.0) == 3
    per_receiver = [most_in_a_window([t for t, r in taken if r == n], 3.0) for n in range(1, 9)]
    if counted:
        assert max(per_receiver) <= 3
    else:  # each receiver's own window reached, never passed; the group's minute not
        assert per_receiver == [3] * 8
        assert len(taken) - len(public) > 20 * (clock.now - 1_000.0) / 60.0
