"""Cursor paging over the table index (``keys.tables``, score = last status
change, newest first) for the admin lists: a page reads the index in batches
from the cursor on, never the whole index, and keeps the tables ``keep``
accepts.  The cursor ``<score>:<table id>`` names the last table returned; ''
starts at the top.  Paging prunes nothing (the leased pruner does,
:meth:`tables.timers.Timers.prune`): entries removed mid-page would shift
the batch offsets."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from typing import Any

from tables.index import Indexed
from tables.model import LiveError
from tables.records import TableSummary
from tables.store import text
from tables.tables import Tables

CURSOR = re.compile(r"^(\d{1,16}):([A-Za-z0-9_-]{1,64})$")


def parse_cursor(cursor: str) -> tuple[str, str]:
    """(the highest score to read, the last id seen) of a cursor."""
    if not cursor:
        return "+inf", ""
    m = CURSOR.match(cursor)
    if m is None:
        raise LiveError("bad_cursor", "the cursor is not one this service gave out")
    return m.group(1), m.group(2)


async def table_page(
    tables: Tables, cursor: str, limit: int, keep: Callable[[Indexed], bool]
) -> tuple[list[TableSummary], str]:
    """Up to ``limit`` tables after ``cursor`` that ``keep`` accepts, newest
    status change first, and the cursor of the next page ('' = no more)."""
    k = tables.keys
    top, after = parse_cursor(cursor)
    batch = max(2 * limit, 100)
    out: list[TableSummary] = []
    offset = 0
    while True:
        rows = await tables.store.one(partial(_range, k.tables, top, offset, batch))
        offset += len(rows)
        seen = [(text(m), int(s)) for m, s in rows]
        # members of one score come in reverse byte order: those >= ``after``
        # at the cursor's score were on earlier pages
        fresh = [(m, s) for m, s in seen if not (after and str(s) == top and m >= after)]
        for (tid, score), ix in zip(
            fresh, await tables.index.load([m for m, _ in fresh]), strict=True
        ):
            if ix is not None and keep(ix):
                out.append(TableSummary.of(ix.table, ix.version, ix.deadline))
                if len(out) == limit:
                    return out, f"{score}:{tid}"
        if len(rows) < batch:
            return out, ""


def _range(key: str, top: str, offset: int, count: int, p: Any) -> object:
    return p.zrevrangebyscore(key, top, "-inf", start=offset, num=count, withscores=True)
