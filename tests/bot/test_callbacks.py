"""Callback data: within 64 bytes in the worst cases, forged payloads rejected."""

from __future__ import annotations

import pytest
from aiogram.filters.callback_data import CallbackData

from telegram_bot.buttons.callbacks import (
    BACK,
    CLEAR,
    INERT,
    MAX_CALLBACK_BYTES,
    MAX_CODE,
    MAX_VERSION,
    PLAY,
    SETTING_VALUES,
    GameCb,
    LobbyCb,
    LobbyOp,
    Press,
    act,
    page,
    parse_game,
    parse_lobby,
    parse_payload,
    press_card,
)

CODE = "Zz_-9" * 3 + "x"  # 16: the longest code
assert len(CODE) == MAX_CODE

WORST_GAME = [
    act("C10H10S"),
    act("L10H"),
    act("R10D"),
    act("S10C"),
    act("TJK"),
    act("CJKJK"),
    act("K"),
    act("P"),
    act("L6C7C8C9C10CJCQCKCAC"),  # the longest Chuvash lead (C6): nine clubs
    press_card("10S"),
    page(999),
    PLAY,
    CLEAR,
    BACK,
    INERT,
]


def _size(cb: CallbackData) -> int:
    return len(cb.pack().encode())


@pytest.mark.parametrize("press", WORST_GAME, ids=lambda p: p.payload)
def test_game_buttons_fit_and_round_trip(press: Press) -> None:
    cb = GameCb.of(CODE, MAX_VERSION, press, "A-b_9Z", "99")
    data = cb.pack()
    assert len(data.encode()) <= MAX_CALLBACK_BYTES
    back = parse_game(data)
    assert back is not None
    assert back == cb
    assert back.press == press
    assert GameCb.unpack(data) == cb


def test_every_lobby_button_fits() -> None:
    args = [""] + [f"{k}={v}" for k, values in SETTING_VALUES.items() for v in values]
    for op in LobbyOp:
        for arg in args:
            cb = LobbyCb(code=CODE, op=op, arg=arg)
            assert _size(cb) <= MAX_CALLBACK_BYTES
            assert parse_lobby(cb.pack()) == cb


def test_lobby_setting_parsed() -> None:
    cb = parse_lobby(LobbyCb(code="abc", op=LobbyOp.SET, arg="decks=4").pack())
    assert cb is not None
    assert cb.setting == ("decks", "4")
    join = parse_lobby("l:abc:j:")
    assert join is not None
    assert join.setting is None


@pytest.mark.parametrize(
    "data",
    [
        None,
        "",
        "g",
        "g:abc:1",
        "g:abc:1:K:extra",
        "x:abc:1:K",
        "g:abc:-1:K",
        "g:abc:one:K",
        f"g:abc:{MAX_VERSION + 1}:K",
        "g:a b:1:K",
        "g::1:K",
        "g:" + "a" * (MAX_CODE + 1) + ":1:K",
        "g:abc:1:",
        "g:abc:1:Z",
        "g:abc:1:C6C",  # a cover needs two cards
        "g:abc:1:K6C",  # take has no cards
        "g:abc:1:R6C7C",  # a transfer is one card
        "g:abc:1:L1C",
        "g:abc:1:c11H",
        "g:abc:1:cJK7",
        "g:abc:1:p",
        "g:abc:1:p1234",
        "g:abc:1:go!",
        "g:abc:1:" + "T10H" * 6,  # too long a payload
        "g:abc:1:K" + "\x00",
        "l:abc:zz:",
        "l:abc:set:decks=3",
        "l:abc:set:timer=45",
        "l:abc:set:game=poker",
        "l:abc:j:max=11",
        "l:abc:j",
        "l:ab:c:j:",
        "g:abc:1:K" + "x" * 80,
    ],
)
def test_forged_data_is_rejected(data: str | None) -> None:
    assert parse_game(data) is None
    assert parse_lobby(data) is None
    if data and data.startswith("g:") and len(data.encode()) <= 64:
        with pytest.raises((ValueError, TypeError)):
            GameCb.unpack(data)


def test_pack_refuses_bad_values() -> None:
    with pytest.raises(ValueError, match="should match pattern"):
        GameCb(game="a:b", version=1, payload="K")
    with pytest.raises(ValueError, match="not a game button payload: 'nonsense'"):
        GameCb(game="abc", version=1, payload="nonsense")
    with pytest.raises(ValueError, match="not a setting: 'decks=5'"):
        LobbyCb(code="abc", op=LobbyOp.SET, arg="decks=5")


def test_a_button_without_a_stamp_still_parses() -> None:
    """Keyboards drawn before stamps existed: parsed (stamp empty), so the handler
    answers them as stale and redraws instead of calling them forged."""
    cb = parse_game("g:abc:7:K")
    assert cb is not None
    assert cb.version == 7
    assert cb.payload == "K"
    assert cb.stamp == ""
    assert parse_game("g:abc:7:K:toolong") is None


def test_stale_version_is_visible() -> None:
    old = parse_game(GameCb.of("abc", 7, act("K")).pack())
    assert old is not None
    assert old.version == 7


def test_parse_payload_kinds() -> None:
    assert parse_payload("C10H10S") == act("C10H10S")
    assert parse_payload("c7S") == press_card("7S")
    assert parse_payload("p3") == page(3)
    assert parse_payload("go") is PLAY
    assert parse_payload("cZZ") is None
