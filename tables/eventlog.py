"""The compact event log of a table.

Every write appends one *group* -- its resulting version and its events -- to
the table hash's open chunk (field ``e``)::

    152/a3C10HJS/i4P/i5TQS;153/u0K/t0_2;

(``v`` then per event: a one-letter kind code, the seat digit or ``_`` for
none, the text).  When the open chunk would pass ``log_chunk`` bytes it is
deflated and appended to the table's stream ``P{t:<id>}:events`` as one entry
with id ``<version>-0`` and field ``z``, in the same compare-and-set; the stream
is capped with ``MAXLEN``.  So the stream holds every event (batched), a short
game may never need a stream node at all, and a long one costs a few bytes per
move.
"""

from __future__ import annotations

import re
import zlib

from tables.model import LiveEvent

CODES = {
    "act": "a",
    "ai": "i",
    "auto": "u",
    "autopass": "p",
    "timeout": "t",
    "takeover": "o",
    "back": "b",
    "left": "l",
    "start": "s",
    "over": "x",
    "reset": "r",
    "abort": "A",
    "delete": "D",
    "create": "c",
    "join": "j",
    "leave": "L",
    "add_ai": "I",
    "remove_ai": "R",
    "settings": "S",
    "cancel": "C",
    "extend": "E",
    "rematch": "m",  # #38: a player agreed to the rematch offered (``lapsed``: seat -1)
}
KINDS = {v: k for k, v in CODES.items()}
_UNSAFE = re.compile(r"[^A-Za-z0-9_.:@=+-]")


def encode_group(version: int, events: list[tuple[str, int, str]]) -> str:
    """One write's events as log text ('' when there are none)."""
    if not events:
        return ""
    parts = [str(version)]
    for kind, seat, text in events:
        s = "_" if seat < 0 else str(seat)
        parts.append(CODES[kind] + s + _UNSAFE.sub("_", text)[:64])
    return "/".join(parts) + ";"


def decode_text(text: str) -> list[LiveEvent]:
    out: list[LiveEvent] = []
    for group in text.split(";"):
        if not group:
            continue
        head, *items = group.split("/")
        v = int(head)
        for item in items:
            seat = -1 if item[1] == "_" else int(item[1])
            out.append(LiveEvent(v, KINDS[item[0]], seat, item[2:]))
    return out


def compress(text: str) -> bytes:
    return zlib.compress(text.encode(), 9)


def decompress(blob: bytes) -> str:
    return zlib.decompress(blob).decode()
