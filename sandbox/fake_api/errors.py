"""The error a Bot API method answers with."""

from __future__ import annotations

from typing import Any


class BotApiError(Exception):
    """``{"ok": false, "error_code": code, "description": description}``."""

    def __init__(self, code: int, description: str, retry_after: int | None = None) -> None:
        super().__init__(f"{code} {description}")
        self.code = code
        self.description = description
        self.retry_after = retry_after

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "ok": False,
            "error_code": self.code,
            "description": self.description,
        }
        if self.retry_after is not None:
            body["parameters"] = {"retry_after": self.retry_after}
        return body


def too_many_requests(retry_after: int) -> BotApiError:
    return BotApiError(429, f"Too Many Requests: retry after {retry_after}", retry_after)
