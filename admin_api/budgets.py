"""The groups' learned flood budgets (#24), as the operators' API reads them.

They are the bot's own state (#39: :mod:`telegram_bot.state.budgets`, over the
table service's key-value API), and the admin API knows nothing of the bot:
it says here what it needs -- :class:`BudgetsReader`, one async ``all()`` --
and whoever builds the app hands it a :data:`BudgetsSource`, a callable that
makes a reader over a process's :class:`tables.KeyValueStore`
(``create_app(budgets=...)``).  The composition root does: :mod:`durak.wiring`
gives it the bot's ``Budgets``.  Without one, ``/api/v1/flood/budgets``
answers an empty list and the ``/metrics`` gauges report nothing learned (as
for a fleet whose groups never drew a 429), and the app logs so at start."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Protocol

from flask import Flask, current_app

from admin_api.service import get_service
from tables import KeyValueStore, SyncTableService

log = logging.getLogger(__name__)
EXTENSION = "flood_budgets"


class LearnedBudget(Protocol):
    """One group's learned budgets: :meth:`as_dict` has the fields of
    :class:`admin_api.schemas.GroupBudgetOut` (more are ignored)."""

    def as_dict(self) -> dict[str, object]: ...


class BudgetsReader(Protocol):
    """What the admin API reads of the learned budgets."""

    async def all(self) -> Sequence[LearnedBudget]:
        """The groups with a learned record, the most recently changed first."""
        ...


BudgetsSource = Callable[[KeyValueStore], BudgetsReader]
"""Makes a :class:`BudgetsReader` over the key-value API of this process's
table service (called per read: the service is made per worker process)."""


def init_app(app: Flask, source: BudgetsSource | None) -> None:
    app.extensions[EXTENSION] = source
    if source is None:
        log.info("admin API: no flood budgets reader given: /flood/budgets lists none")


def source_of(app: Flask) -> BudgetsSource | None:
    source: BudgetsSource | None = app.extensions.get(EXTENSION)
    return source


def learned(svc: SyncTableService, source: BudgetsSource | None) -> list[dict[str, object]]:
    """The learned budgets as dicts (none without a ``source``)."""
    if source is None:
        return []
    return [b.as_dict() for b in svc.call(source(svc.service.kv).all)]


def current() -> list[dict[str, object]]:
    """:func:`learned`, with the current app's service and source."""
    return learned(get_service(), source_of(current_app))


__all__ = ["BudgetsReader", "BudgetsSource", "LearnedBudget", "current", "init_app", "learned"]
