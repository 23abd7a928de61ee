"""What an edit shows: the table version it renders and the checks of the
digests the flood limiter stores of a message."""

from __future__ import annotations


def table_version(table_id: str, version: int) -> str:
    """What an edit of a table's message renders: only an older version of the
    SAME table is refused (a message may show another table later)."""
    return f"{table_id}#{version}"


GONE = 2**53
"""The version a deleted message "shows" (#28): every edit of it renders an older
one, so the shared digest refuses it (``STALE``) in every process."""


def gone_version(table_id: str) -> str:
    """What a deleted message of ``table_id`` is recorded to show (:data:`GONE`)."""
    return table_version(table_id, GONE)


def check_digest(text_digest: str | None, markup_digest: str) -> None:
    for d in (text_digest, markup_digest):
        if d is not None and (not d or ":" in d or d in ("*", "?")):
            raise ValueError(f"bad content digest {d!r}: non-empty, no ':', not '*' or '?'")
