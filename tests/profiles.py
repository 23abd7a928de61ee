"""How many examples a random property runs (#37): the loaded Hypothesis profile
says (``tests/conftest.py``: ``ci`` for the test command, ``deep`` for
``bash .ci/dev test --deep``, ``dev`` by hand).  A test says only what one of its
examples costs next to a cheap one: the *share* of the profile's count it runs,
so that one profile tunes every property at once and none overrides it with a
count of its own."""

from __future__ import annotations

from typing import Any

from hypothesis import settings


def examples(share: float = 1.0) -> int:
    """``share`` of the loaded profile's ``max_examples`` (at least 1)."""
    profile = settings.default
    assert profile is not None, "no Hypothesis profile loaded (tests/conftest.py)"
    return max(1, round(profile.max_examples * share))


def budget(share: float = 1.0, **options: Any) -> settings:
    """Settings with ``share`` of the profile's examples (and ``options``)."""
    return settings(max_examples=examples(share), **options)
