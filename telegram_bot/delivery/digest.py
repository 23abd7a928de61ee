"""What an edit shows: the table version it renders and the checks of the
digests the flood limiter stores of a message."""

from __future__ import annotations


def table_version(table_id: str, version: int) -> str:
    """What an edit renders: only an older version of the SAME table is refused."""
    return f"{table_id}#{version}"


def parse_version(version: str) -> tuple[str, int] | None:
    """(table id, version) of a :func:`table_version` (None: not one)."""
    table, sep, number = version.rpartition("#")
    return (table, int(number)) if sep and number.isdigit() else None


def is_older(version: str, shown: str) -> bool:
    """Does ``version`` render an older version of the same table than the message
    ``shown``?  (Then the edit is dropped: content never goes backwards.)"""
    new, cur = parse_version(version), parse_version(shown)
    return new is not None and cur is not None and new[0] == cur[0] and new[1] < cur[1]


def shown_after(version: str, shown: str) -> str:
    """What the message shows once an edit of ``version`` went out: the highest
    of the same table, as ``ACQUIRE_LUA`` records it."""
    new, cur = parse_version(version), parse_version(shown)
    if new is None:
        return shown
    if cur is not None and cur[0] == new[0] and cur[1] > new[1]:
        return shown
    return version


GONE = 2**53
"""The version a deleted message "shows" (#28): every edit of it is older."""


def gone_version(table_id: str) -> str:
    """What a deleted message of ``table_id`` is recorded to show (:data:`GONE`)."""
    return table_version(table_id, GONE)


RECORD_MARKS = frozenset(":|@~")
"""What splits a message's record (:data:`telegram_bot.delivery.flood.scripts.RECORD_LUA`):
never in a digest."""


def check_digest(text_digest: str | None, markup_digest: str) -> None:
    for d in (text_digest, markup_digest):
        if d is not None and (not d or RECORD_MARKS & set(d) or d in ("*", "?")):
            raise ValueError(f"bad content digest {d!r}: non-empty, none of ':|@~', not '*' or '?'")
