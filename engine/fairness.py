"""The provably fair deal (issue #16): the shuffle is a fixed algorithm that
anyone can recompute in any language, and the commitment binds a game to its
secret seed before the first card is played.  docs/FAIRNESS.md explains it.

The shuffle (format ``durak-deal/1``).  A byte stream: block ``k`` (0, 1, 2, ...)
is ``SHA-256("durak-deal/1:<variant>:<players>:<seed>:<k>")`` (UTF-8, the seed in
decimal); draws take 8 bytes at a time, big-endian.  ``below(m)``: draw ``x``;
while ``x >= 2**64 - 2**64 % m`` draw again (no bias); return ``x % m``.  The deck
in its fixed order (:meth:`engine.variants.Variant.deck`) is shuffled by
Fisher-Yates: for ``i`` from ``len - 1`` down to 1, swap ``deck[i]`` and
``deck[below(i + 1)]``.  A lot (S5 ties) continues the same stream.

The commitment (format ``durak-commit/1``): the SHA-256, in hex, of the lines
``durak-commit/1``, ``seed=<seed>``, ``variant=<variant>``, ``players=<n>`` and
``options=<options as compact JSON, keys sorted>``, each ended by ``\\n``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from engine.cards import Card
from engine.variants import Options, Variant, find_variant

DEAL_FORMAT = "durak-deal/1"
COMMIT_FORMAT = "durak-commit/1"
_SPAN = 1 << 64


class DealStream:
    """The deal's deterministic byte stream (SHA-256 in counter mode)."""

    def __init__(self, variant: str, players: int, seed: int | str) -> None:
        self._key = f"{DEAL_FORMAT}:{variant}:{players}:{seed}:"
        self._block = 0
        self._buf = b""

    def _draw(self) -> int:
        if not self._buf:
            self._buf = hashlib.sha256(f"{self._key}{self._block}".encode()).digest()
            self._block += 1
        x, self._buf = self._buf[:8], self._buf[8:]
        return int.from_bytes(x, "big")

    def below(self, m: int) -> int:
        """A uniform integer in ``[0, m)``, by rejection."""
        if m <= 0:
            raise ValueError("below() needs a positive bound")
        limit = _SPAN - _SPAN % m
        while True:
            x = self._draw()
            if x < limit:
                return x % m

    def shuffle(self, deck: list[Card]) -> None:
        """Fisher-Yates, in place."""
        for i in range(len(deck) - 1, 0, -1):
            j = self.below(i + 1)
            deck[i], deck[j] = deck[j], deck[i]

    def choice(self, seats: Sequence[int]) -> int:
        return seats[self.below(len(seats))]


def canonical(
    seed: int | str,
    variant: str | Variant,
    players: int,
    options: Mapping[str, Any] | Options | None,
) -> str:
    """The committed text: seed, variant, number of players (seats 0..n-1 in the
    table's order) and the validated options."""
    v = variant if isinstance(variant, Variant) else find_variant(variant)
    opts = json.dumps(v.options(options).to_json(), sort_keys=True, separators=(",", ":"))
    return f"{COMMIT_FORMAT}\nseed={seed}\nvariant={v.name}\nplayers={players}\noptions={opts}\n"


def commitment(
    seed: int | str,
    variant: str | Variant,
    players: int,
    options: Mapping[str, Any] | Options | None = None,
) -> str:
    """SHA-256 hex of :func:`canonical`: shown at the start, checked at the end."""
    return hashlib.sha256(canonical(seed, variant, players, options).encode()).hexdigest()


__all__ = ["COMMIT_FORMAT", "DEAL_FORMAT", "DealStream", "canonical", "commitment"]
