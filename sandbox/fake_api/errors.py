"""The error a Bot API method answers with."""

from __future__ import annotations

from typing import Any


class BotApiError(Exception):
    """``{"ok": false, "error_code": code, "description": description}``."""

    def __init__(
        self,
        code: int,
        description: str,
        retry_after: int | None = None,
        migrate_to_chat_id: int | None = None,
    ) -> None:
        super().__init__(f"{code} {description}")
        self.code = code
        self.description = description
        self.retry_after = retry_after
        self.migrate_to_chat_id = migrate_to_chat_id

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "ok": False,
            "error_code": self.code,
            "description": self.description,
        }
        if self.retry_after is not None:
            body["parameters"] = {"retry_after": self.retry_after}
        if self.migrate_to_chat_id is not None:  # ResponseParameters
            body["parameters"] = {"migrate_to_chat_id": self.migrate_to_chat_id}
        return body


UPGRADED = "Bad Request: group chat was upgraded to a supergroup chat"


def upgraded(new_chat_id: int) -> BotApiError:
    """What any method answers about a group that became a supergroup: 400 with
    ``parameters.migrate_to_chat_id``, the supergroup's id."""
    return BotApiError(400, UPGRADED, migrate_to_chat_id=new_chat_id)


def too_many_requests(retry_after: int) -> BotApiError:
    return BotApiError(429, f"Too Many Requests: retry after {retry_after}", retry_after)
