"""``python -m admin_api``: serve the admin API under gunicorn (as the Procfile's
``web`` process does), after checking the configuration and printing its URLs.
``PORT`` (default 8000) and ``HOST`` (default 0.0.0.0) choose the address.
:func:`main` serves ``create_app()`` as it is (no flood budgets reader); ``durak
admin`` calls it with the product's own factory (:mod:`durak.wiring`)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from flask import Flask

from admin_api import ConfigError, create_app
from admin_api.gunicorn_worker import OPTIONS
from admin_api.service import close_service

APP = "admin_api:create_app()"
"""The app gunicorn serves by default (its ``module:call()`` spelling)."""


def main(app: str = APP, factory: Callable[[], Flask] = create_app) -> int:
    """Check that ``factory`` builds the app, then exec gunicorn serving ``app``
    (the same factory, as gunicorn spells it)."""
    try:
        close_service(factory())  # fail here, with the message, not in a worker
    except ConfigError as e:
        sys.stderr.write(f"admin API: {e}\n")
        return 2
    host = os.environ.get("HOST", "0.0.0.0")
    port = os.environ.get("PORT", "8000")
    shown = "127.0.0.1" if host == "0.0.0.0" else host
    sys.stdout.write(
        f"admin API on http://{shown}:{port}/api/v1 "
        f"(docs http://{shown}:{port}/openapi/swagger, "
        f"OpenAPI http://{shown}:{port}/openapi/openapi.json)\n"
    )
    sys.stdout.flush()
    args = ["gunicorn", app, "--bind", f"{host}:{port}", *OPTIONS]
    os.execvp(args[0], args)


if __name__ == "__main__":
    raise SystemExit(main())
