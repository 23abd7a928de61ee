"""Typed access to a Bot API call's parameters, whatever encoding they came in.

Form data (multipart or urlencoded) carries every value as a string, nested
objects as JSON strings; a JSON body carries typed values. Both read the same.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from sandbox.fake_api.errors import BotApiError


class CallParams:
    def __init__(self, raw: Mapping[str, Any]) -> None:
        self.raw = dict(raw)

    def __contains__(self, name: str) -> bool:
        return self.raw.get(name) not in (None, "")

    def _missing(self, name: str) -> BotApiError:
        return BotApiError(400, f'Bad Request: parameter "{name}" is required')

    def string(self, name: str, default: str | None = None) -> str | None:
        value = self.raw.get(name)
        if value is None:
            return default
        return value if isinstance(value, str) else json.dumps(value)

    def req_string(self, name: str) -> str:
        value = self.string(name)
        if value is None:
            raise self._missing(name)
        return value

    def integer(self, name: str, default: int | None = None) -> int | None:
        value = self.raw.get(name)
        if value is None or value == "":
            return default
        if isinstance(value, bool):
            raise BotApiError(400, f'Bad Request: field "{name}" must be a Number')
        try:
            return int(value)
        except (TypeError, ValueError):
            raise BotApiError(400, f'Bad Request: field "{name}" must be a Number') from None

    def req_integer(self, name: str) -> int:
        value = self.integer(name)
        if value is None:
            raise self._missing(name)
        return value

    def boolean(self, name: str, default: bool = False) -> bool:
        value = self.raw.get(name)
        if value is None or value == "":
            return default
        if isinstance(value, bool):
            return value
        if isinstance(value, int):
            return value != 0
        return str(value).lower() in ("true", "1")

    def json(self, name: str) -> Any:
        """A nested object: decoded from a JSON string, or as given in a JSON body."""
        value = self.raw.get(name)
        if value is None or value == "":
            return None
        if isinstance(value, str):
            try:
                return json.loads(value)
            except ValueError:
                raise BotApiError(400, f"Bad Request: can't parse {name} JSON object") from None
        return value

    def chat_id(self, name: str = "chat_id") -> int | str:
        """An integer chat id, or ``@username``."""
        value = self.raw.get(name)
        if value is None or value == "":
            raise BotApiError(400, "Bad Request: chat_id is empty")
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        text = str(value)
        if text.startswith("@"):
            return text
        try:
            return int(text)
        except ValueError:
            raise BotApiError(400, "Bad Request: chat not found") from None
