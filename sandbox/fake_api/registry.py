"""The table of Bot API methods the fake implements (names are case-insensitive)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from sandbox.fake_api.params import CallParams
from sandbox.fake_api.world import World

Handler = Callable[[World, CallParams], Awaitable[Any]]
METHODS: dict[str, tuple[str, Handler]] = {}  # lower-case name -> (name, handler)


def method(name: str) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        METHODS[name.lower()] = (name, handler)
        return handler

    return register


def find_method(name: str) -> tuple[str, Handler] | None:
    """(the method's canonical name, its handler), or None for an unknown method."""
    return METHODS.get(name.lower())
