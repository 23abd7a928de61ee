"""The audit part: the stream of operator actions (``keys.audit``) the admin
API writes for every write attempt, read newest first.

Attempts refused before anything was tried (HTTP status 401 or 403, e.g. a
read-only token on a write) go to a stream of their own, ``keys.audit +
":refused"``, with its own cap: however many a client makes, they never push
the record of real writes out of ``keys.audit``.  Reads merge both streams by
id (so by millisecond; within one millisecond a write and a refusal may come
in either order), and paging by id skips nothing."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.clock import Clock
from engine.live.model import LiveConfig
from engine.live.records import AuditEntry, AuditPage
from engine.live.store import Store, text

REFUSED_STATUSES = frozenset({"401", "403"})
"""``status`` values of an entry that goes to the refused stream."""


def _stream_id(entry_id: str) -> tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


class Audit:
    def __init__(self, store: Store, config: LiveConfig, clock: Clock) -> None:
        self.store = store
        self.key = store.keys.audit
        self.refused_key = f"{self.key}:refused"
        self.config = config
        self.clock = clock

    async def audit(self, entry: Mapping[str, str | int]) -> str:
        """Append an operator action to the audit stream with the time ``at``
        (ms); returns the entry id.  Entries are flat string maps: the admin API
        writes ``actor``, ``role``, ``action``, ``target``, ``status``,
        ``result`` (never a token).  A refused attempt (``status`` 401/403) goes
        to the refused stream, capped on its own."""
        fields: dict[Any, Any] = {"at": int(self.clock() * 1000), **entry}
        key = self.refused_key if str(entry.get("status", "")) in REFUSED_STATUSES else self.key
        maxlen = self.config.audit_maxlen
        entry_id = await self.store.one(
            lambda p: p.xadd(key, fields, maxlen=maxlen, approximate=True)
        )
        return text(entry_id)

    async def audit_page(self, *, before: str | None = None, count: int = 50) -> AuditPage:
        """Audit entries (writes and refused attempts), newest first, with ids
        below ``before`` (a previous page's last id; None: from the newest), and
        the length of both streams.  A page may hold one entry more than
        ``count`` when a write and a refusal share the last id (so that paging
        by that id skips neither)."""
        keys = (self.key, self.refused_key)
        if before is not None and before.strip("-0") == "":  # nothing below 0-0

            def lengths(p: Any) -> None:
                for k in keys:
                    p.xlen(k)

            return AuditPage((), sum(int(n) for n in await self.store.run(lengths)))
        top = f"({before}" if before else "+"

        def build(p: Any) -> None:
            for k in keys:
                p.xrevrange(k, top, "-", count=count)
            for k in keys:
                p.xlen(k)

        rows, refused, total, refused_total = await self.store.run(build)
        entries = sorted(
            (
                AuditEntry(text(i), {text(k): text(v) for k, v in fields.items()})
                for i, fields in (*rows, *refused)
            ),
            key=lambda e: _stream_id(e.id),
            reverse=True,
        )
        page = entries[:count]
        if page and len(entries) > count and entries[count].id == page[-1].id:
            page.append(entries[count])
        return AuditPage(tuple(page), int(total) + int(refused_total))
