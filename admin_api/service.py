"""The table service of this process: one :class:`tables.SyncTableService`
per worker process, created lazily on first use (so after gunicorn forks) and
closed at exit.  The admin API reaches Redis only through it."""

from __future__ import annotations

import atexit
import os
import threading

from flask import Flask, current_app

from tables import LiveConfig, SyncTableService

EXTENSION = "table_service"


class ServiceHolder:
    """Creates the service on first :meth:`get` in each process."""

    def __init__(self, url: str, config: LiveConfig) -> None:
        self.url = url
        self.config = config
        self._svc: SyncTableService | None = None
        self._pid = 0
        self._lock = threading.Lock()
        self._atexit = False

    def get(self) -> SyncTableService:
        with self._lock:
            if self._svc is None or self._pid != os.getpid():
                # A service inherited through fork has no loop thread here: drop it.
                self._svc = SyncTableService(self.url, self.config)
                self._pid = os.getpid()
                if not self._atexit:
                    atexit.register(self.close)
                    self._atexit = True
            return self._svc

    def close(self) -> None:
        """Close this process's service (idempotent)."""
        with self._lock:
            svc, self._svc = self._svc, None
            if svc is not None and self._pid == os.getpid():
                svc.close()
        if self._atexit:
            atexit.unregister(self.close)
            self._atexit = False


def get_service() -> SyncTableService:
    """The service of the current app (inside a request or app context)."""
    holder: ServiceHolder = current_app.extensions[EXTENSION]
    return holder.get()


def close_service(app: Flask) -> None:
    holder: ServiceHolder = app.extensions[EXTENSION]
    holder.close()


def init_app(app: Flask) -> None:
    config = LiveConfig(
        prefix=app.config["REDIS_PREFIX"],
        rated_after_games=int(app.config["RATED_AFTER_GAMES"]),
        rated_after_days=float(app.config["RATED_AFTER_DAYS"]),
        rated_diversity_opponents=int(app.config["RATED_DIVERSITY_OPPONENTS"]),
        rated_diversity_days=float(app.config["RATED_DIVERSITY_DAYS"]),
        rating_log_maxlen=int(app.config["RATING_LOG_MAXLEN"]),
    )
    app.extensions[EXTENSION] = ServiceHolder(app.config["REDIS_URL"], config)
