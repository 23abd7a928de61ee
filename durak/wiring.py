"""The product's composition root for the admin API: the two adapters know
nothing of each other (pyproject's ``product-layers`` contract), so the admin
API's reader of the groups' learned flood budgets (#24, the bot's own state
since #39: :class:`telegram_bot.state.budgets.Budgets`) is handed to it here.

``admin_app()`` is what gunicorn serves for ``durak admin`` (the Procfile's
``web``) and ``durak run`` (:data:`ADMIN_APP`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flask_openapi3.openapi import OpenAPI

from admin_api import create_app
from telegram_bot.state.budgets import Budgets

ADMIN_APP = "durak.wiring:admin_app()"
""":func:`admin_app` as gunicorn spells an app factory."""


def admin_app(test_config: Mapping[str, Any] | None = None) -> OpenAPI:
    """The admin API with the bot's flood budgets reader: a ``Budgets`` over
    the key-value API of the worker's table service, per read, with the
    documented rules (as the table service's own was before #39)."""
    return create_app(test_config, flood_budgets=Budgets)


__all__ = ["ADMIN_APP", "admin_app"]
