"""Errors raised by checked entry points: each is a ``ValueError`` with a stable
machine-readable ``code`` and a human ``message`` (python-chess style)."""

from __future__ import annotations


class EngineError(ValueError):
    """Base class: ``code`` is stable (used by the bot, the API and scenario files)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def to_json(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


class OptionsError(EngineError):
    """Invalid variant, player count or option."""


class IllegalAction(EngineError):
    """An action the rules do not allow now.  Raising it changes nothing."""


class ActionFormatError(EngineError):
    """Text or JSON that is not an action at all."""


class StateFormatError(EngineError):
    """Serialized state or scenario that cannot be read."""
