"""Pure rules engine for Chuvash Rooster and Durak Shchelkovsky (``RULES.md``).

The rules are pure: no I/O, no asyncio, no Redis, no Telegram; deterministic
given a seed.  The table service on Redis (lobbies, games saved with
compare-and-set, timers, results) is the package :mod:`tables` beside it: it
uses the rules, and is the only code that imports redis.

>>> from engine import new_game
>>> game = new_game("chuvash", players=2, seed=1)
>>> seat = game.to_act()[0]
>>> action = game.legal_actions(seat)[0]
>>> events = game.apply(action)
"""

from engine.actions import Action
from engine.cards import Card, card_name, card_names, parse_card, parse_cards
from engine.errors import (
    ActionFormatError,
    EngineError,
    IllegalAction,
    OptionsError,
    StateFormatError,
)
from engine.serialize import state_from_json, state_to_json
from engine.setup import from_deal, new_game
from engine.state import BOUT_PHASE, LEAD_PHASE, OVER_PHASE, Event, GameState
from engine.variants import VARIANTS, Options, Variant, find_variant
from engine.views import public_view, view

__all__ = [
    "BOUT_PHASE",
    "LEAD_PHASE",
    "OVER_PHASE",
    "VARIANTS",
    "Action",
    "ActionFormatError",
    "Card",
    "EngineError",
    "Event",
    "GameState",
    "IllegalAction",
    "Options",
    "OptionsError",
    "StateFormatError",
    "Variant",
    "card_name",
    "card_names",
    "find_variant",
    "from_deal",
    "new_game",
    "parse_card",
    "parse_cards",
    "public_view",
    "state_from_json",
    "state_to_json",
    "view",
]
