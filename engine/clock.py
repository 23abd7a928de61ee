"""The one clock type: a source of seconds (``time.time`` for wall-clock deadlines,
``time.monotonic`` for intervals); tests inject their own."""

from collections.abc import Callable
from dataclasses import dataclass

Clock = Callable[[], float]


@dataclass(frozen=True)
class Scaled:
    """``base`` running ``factor`` times as fast: ``factor * base()``.

    Telegram's windows as configuration on a shorter time scale (#37): the fake
    Bot API and the bot both read their clock through the same ``factor`` (and
    sleep ``seconds / factor``), so a group's minute passes in ``60 / factor``
    real seconds with the same decisions in it.  Every process scaling the same
    ``base`` agrees on the time (``time.time``: the bot processes of a fleet
    share their flood windows in Redis)."""

    base: Clock
    factor: float

    def __post_init__(self) -> None:
        if not self.factor > 0:
            raise ValueError(f"a time scale must be positive, not {self.factor!r}")

    def __call__(self) -> float:
        return self.base() * self.factor


def scaled(base: Clock, factor: float) -> Clock:
    """``base`` itself at factor 1, else :class:`Scaled`."""
    return base if factor == 1 else Scaled(base, factor)


__all__ = ["Clock", "Scaled", "scaled"]
