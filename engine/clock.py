"""The one clock type: a source of seconds (``time.time`` for wall-clock deadlines,
``time.monotonic`` for intervals); tests inject their own."""

from collections.abc import Callable

Clock = Callable[[], float]

__all__ = ["Clock"]
