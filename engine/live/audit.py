"""The audit part: the stream of operator actions (``keys.audit``) the admin
API writes for every write attempt, read newest first."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.clock import Clock
from engine.live.model import LiveConfig
from engine.live.records import AuditEntry, AuditPage
from engine.live.store import Store, text


class Audit:
    def __init__(self, store: Store, config: LiveConfig, clock: Clock) -> None:
        self.store = store
        self.key = store.keys.audit
        self.config = config
        self.clock = clock

    async def audit(self, entry: Mapping[str, str | int]) -> str:
        """Append an operator action to the audit stream with the time ``at``
        (ms); returns the entry id.  Entries are flat string maps: the admin API
        writes ``actor``, ``role``, ``action``, ``target``, ``status``,
        ``result`` (never a token)."""
        fields: dict[Any, Any] = {"at": int(self.clock() * 1000), **entry}
        maxlen = self.config.audit_maxlen
        entry_id = await self.store.one(
            lambda p: p.xadd(self.key, fields, maxlen=maxlen, approximate=True)
        )
        return text(entry_id)

    async def audit_page(self, *, before: str | None = None, count: int = 50) -> AuditPage:
        """Audit entries, newest first, with ids below ``before`` (a previous
        page's last id; None: from the newest), and the stream's length."""
        if before is not None and before.strip("-0") == "":  # nothing below 0-0
            return AuditPage((), int(await self.store.one(lambda p: p.xlen(self.key))))
        top = f"({before}" if before else "+"

        def build(p: Any) -> None:
            p.xrevrange(self.key, top, "-", count=count)
            p.xlen(self.key)

        rows, total = await self.store.run(build)
        entries = tuple(
            AuditEntry(text(i), {text(k): text(v) for k, v in fields.items()}) for i, fields in rows
        )
        return AuditPage(entries, int(total))
