"""The audit part: the stream of operator actions (``keys.audit``) the admin
API writes for every write attempt, read newest first.

Attempts refused before anything was tried (HTTP status 401 or 403, e.g. a
read-only token on a write) go to a stream of their own, ``keys.audit_refused``,
with its own cap: however many a client makes, they never push the record of
real writes out of ``keys.audit``.  Both streams share one hash
tag and one id sequence (:data:`AUDIT_ADD_LUA` gives every entry an id above the
last id of either stream), so reads merge them by id in the order the entries
were written, and paging by id skips nothing."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.clock import Clock
from tables.model import LiveConfig
from tables.records import AuditEntry, AuditPage
from tables.store import Store, text

AUDIT_ADD_LUA = r"""
local t = redis.call('TIME')
local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local seq = 0
for _, key in ipairs(KEYS) do
  if redis.call('EXISTS', key) == 1 then
    local info = redis.call('XINFO', 'STREAM', key)
    for i = 1, #info, 2 do
      if info[i] == 'last-generated-id' then
        local lms, lseq = string.match(info[i + 1], '^(%d+)-(%d+)$')
        lms, lseq = tonumber(lms), tonumber(lseq)
        if lms > ms then ms, seq = lms, lseq + 1
        elseif lms == ms and lseq + 1 > seq then seq = lseq + 1 end
      end
    end
  end
end
local id = ms .. '-' .. seq
return redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], id, unpack(ARGV, 2))
"""
"""XADD to ``KEYS[1]`` with an id above the last id of every stream in ``KEYS``
(the audit streams: one sequence for both)."""

REFUSED_STATUSES = frozenset({"401", "403"})
"""``status`` values of an entry that goes to the refused stream."""


def _stream_id(entry_id: str) -> tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


class Audit:
    def __init__(self, store: Store, config: LiveConfig, clock: Clock) -> None:
        self.store = store
        self.key = store.keys.audit
        self.refused_key = store.keys.audit_refused
        self.config = config
        self.clock = clock
        self._add = store.script(AUDIT_ADD_LUA)

    async def audit(self, entry: Mapping[str, str | int]) -> str:
        """Append an operator action to the audit stream with the time ``at``
        (ms); returns the entry id.  Entries are flat string maps: the admin API
        writes ``actor``, ``role``, ``action``, ``target``, ``status``,
        ``result`` (never a token).  A refused attempt (``status`` 401/403) goes
        to the refused stream, capped on its own."""
        fields: dict[str, str | int] = {"at": int(self.clock() * 1000), **entry}
        refused = str(entry.get("status", "")) in REFUSED_STATUSES
        keys = (self.refused_key, self.key) if refused else (self.key, self.refused_key)
        args: list[str | int] = [self.config.audit_maxlen]
        for name, value in fields.items():
            args += [name, value]
        return text(await self._add(keys, args))

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
