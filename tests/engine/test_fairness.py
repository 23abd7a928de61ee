"""The provably fair deal (issue #16): pinned seeds give pinned deals on every
machine, the shuffle is the algorithm docs/FAIRNESS.md describes (recomputed here
from the text, independently of engine/fairness.py), ``python -m engine verify``."""

from __future__ import annotations

import hashlib
import json

import pytest

from engine import card_names, find_variant, new_game
from engine.__main__ import main
from engine.fairness import canonical, commitment
from engine.verify import verify

PINNED = [
    (
        12345,
        "chuvash",
        3,
        [
            ["6S", "7C", "7S", "9D", "10H", "KS"],
            ["6D", "7D", "8D", "9S", "JH", "AH"],
            ["7H", "8C", "QS", "KD", "AC", "AD"],
        ],
        ["10S", "KH", "AS", "JC", "6H", "8H", "QD", "9H"],
        None,
        1,
        "8c8b8bdf929ca64241557f73a3ccc13e9cd225e0a88f9fd53b50588b06c7b36f",
    ),
    (
        7,
        "shchelkovsky",
        2,
        [["5S", "6D", "7H", "9S", "QS", "JK"], ["2H", "3D", "3H", "4D", "4H", "7C"]],
        ["7H", "9S", "KC", "3S", "JS", "2C", "8C", "3C"],
        "KS",
        0,
        "6164f174c213d9d1598517cd52325549809be5552005e1ddbb8d9d21bbc84ed9",
    ),
]


@pytest.mark.parametrize(
    ("seed", "variant", "n", "hands", "stock", "trump", "first", "digest"), PINNED
)
def test_pinned_seed_gives_pinned_deal(
    seed: int,
    variant: str,
    n: int,
    hands: list[list[str]],
    stock: list[str],
    trump: str | None,
    first: int,
    digest: str,
) -> None:
    got = verify(seed, digest, variant, n)
    assert got["ok"] is True
    assert got["commitment"] == digest
    assert got["hands"] == hands
    assert got["stock"][: len(stock)] == stock
    assert got["trump_card"] == trump
    assert got["first_attacker"] == first


def _spec_shuffle(variant: str, players: int, seed: int, deck: list[int]) -> list[int]:
    """docs/FAIRNESS.md, word for word."""
    blocks = (
        hashlib.sha256(f"durak-deal/1:{variant}:{players}:{seed}:{k}".encode()).digest()
        for k in range(10**6)
    )
    draws = (int.from_bytes(b[i : i + 8], "big") for b in blocks for i in range(0, 32, 8))
    deck = list(deck)
    for i in range(len(deck) - 1, 0, -1):
        m = i + 1
        while (x := next(draws)) >= 2**64 - 2**64 % m:
            pass
        j = x % m
        deck[i], deck[j] = deck[j], deck[i]
    return deck


@pytest.mark.parametrize(
    ("variant", "players"), [("chuvash", 2), ("chuvash", 6), ("shchelkovsky", 3)]
)
@pytest.mark.parametrize("seed", [0, 1, 99, 2**62 - 1])
def test_shuffle_is_the_documented_algorithm(variant: str, players: int, seed: int) -> None:
    v = find_variant(variant)
    deck = _spec_shuffle(variant, players, seed, v.deck(v.defaults))
    state = new_game(variant, players, seed)
    for s in range(players):
        assert sorted(state.hand(s)) == sorted(deck[s * 6 : (s + 1) * 6])
    rest = deck[players * 6 :]
    if v.has_trump:
        assert rest[0] != 52  # these seeds turn up a plain card (S3's joker case aside)
        rest = [*rest[1:], rest[0]]  # S3: the top card goes face up to the bottom
    assert state.stock_top_first() == rest


def test_commitment_is_sha256_of_documented_text() -> None:
    text = canonical(5, "shchelkovsky", 3, {"decks": 4})
    assert text == (
        "durak-commit/1\nseed=5\nvariant=shchelkovsky\nplayers=3\n"
        'options={"decks":4,"remove_joker":true}\n'
    )
    assert (
        commitment(5, "shchelkovsky", 3, {"decks": 4}) == hashlib.sha256(text.encode()).hexdigest()
    )
    # every committed input changes it
    others = {
        commitment(6, "shchelkovsky", 3, {"decks": 4}),
        commitment(5, "shchelkovsky", 4, {"decks": 4}),
        commitment(5, "shchelkovsky", 3, {"decks": 2}),
        commitment(5, "chuvash", 3),
    }
    assert commitment(5, "shchelkovsky", 3, {"decks": 4}) not in others
    assert len(others) == 4


def test_verify_cli(capsys: pytest.CaptureFixture[str]) -> None:
    seed, variant, n, hands, _stock, _t, _f, digest = PINNED[0]
    assert main(["verify", str(seed), digest, "--variant", variant, "--players", str(n)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] is True
    assert out["hands"] == hands
    assert len(out["stock"]) == 36 - 18
    # a wrong commitment (or another seed) is reported, exit 1
    assert main(["verify", str(seed + 1), digest, "--variant", variant, "--players", str(n)]) == 1
    assert json.loads(capsys.readouterr().out)["ok"] is False
    # bad input: a clear error, exit 2
    assert main(["verify", "1", digest, "--variant", "poker", "--players", "2"]) == 2
    assert "error:" in capsys.readouterr().err
    # a seed that is not a number is bad input, not a mismatch (#29)
    assert main(["verify", "abc", digest, "--variant", variant, "--players", str(n)]) == 2
    assert "whole number" in capsys.readouterr().err


def test_deal_holds_the_whole_deck() -> None:
    state = new_game("shchelkovsky", 4, 2024, {"decks": 4})
    dealt = [c for s in range(4) for c in state.hand(s)] + state.stock_top_first()
    v = find_variant("shchelkovsky")
    assert sorted(card_names(dealt)) == sorted(card_names(v.deck(v.options({"decks": 4}))))
