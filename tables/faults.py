"""How the code logs a failure it survives (#40): a fault it expects -- the store
unavailable (a dead node, a failover), a connection refused or reset, a timeout
-- is one warning line saying what failed and what was done about it; anything
else, its traceback (a bug to look at).  A failover of a Redis Cluster master
printed 34 tracebacks in the bots' logs before."""

from __future__ import annotations

import logging
from types import TracebackType

from tables.model import ServiceUnavailable

EXPECTED_FAULTS: tuple[type[BaseException], ...] = (
    ServiceUnavailable,
    ConnectionError,
    TimeoutError,
)


def expected_fault(exc: BaseException) -> bool:
    """A fault of the environment, not of the code."""
    return isinstance(exc, EXPECTED_FAULTS)


def log_failure(log: logging.Logger, exc: BaseException, what: str, *args: object) -> None:
    """Log ``what % args`` (what failed, and what is done about it): with the
    fault's own words on one line when it is expected, else with its traceback."""
    if expected_fault(exc):
        log.warning(what + " (%s)", *args, exc)
    else:
        log.error(what, *args, exc_info=exc)


class survived:
    """``with survived(log, "could not do X of %s; Y instead", x): ...`` -- a
    failure inside is logged by :func:`log_failure` and goes no further (the
    code after the block is what is done about it)."""

    def __init__(self, log: logging.Logger, what: str, *args: object) -> None:
        self.log, self.what, self.args = log, what, args

    def __enter__(self) -> None:
        return None

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        trace: TracebackType | None,
    ) -> bool:
        if exc is None or not isinstance(exc, Exception):  # CancelledError goes on
            return False
        log_failure(self.log, exc, self.what, *self.args)
        return True
