"""Every IllegalAction code of the engine API: the right ``.code`` and no change at
all (``state_to_json`` before == after)."""

from __future__ import annotations

import pytest

from engine import Action, GameState, IllegalAction, state_to_json
from tests.engine.rulekit import deal, illegal, play

API_CODES = [
    "game_over",
    "bad_seat",
    "player_out",
    "card_not_in_hand",
    "wrong_phase",
    "not_your_turn",
    "no_cards",
    "lead_one_card",
    "lead_one_suit",
    "hand_limit",
    "not_defender",
    "already_taking",
    "nothing_to_take",
    "attack_not_on_table",
    "does_not_beat",
    "throw_in_closed",
    "already_passed",
    "rank_not_on_table",
    "not_your_priority",
    "throw_in_cap",
    "defender_cannot_throw",
    "defender_cannot_pass",
    "transfer_not_allowed",
    "must_defend",
    "wrong_rank",
    "not_trump",
]

Deal = tuple[str, list[str], str, dict[str, object]]

CH3: Deal = ("chuvash", ["6C 7C 8C 6D", "KS QS 9S 10D", "6H 7H"], "AC AD AH AS KC KD", {})
SH3: Deal = ("shchelkovsky", ["7H 7C 9D 8C", "7D 8H KC QC", "7S 2H", "JK"], "4D 5S", {})

# (name, game, moves before, illegal move, code)
CASES: list[tuple[str, Deal, list[str], str, str]] = [
    ("game_over", ("chuvash", ["6C", "7C"], "", {}), ["0:L6C", "1:C6C7C"], "1:P", "game_over"),
    ("bad_seat", CH3, [], "5:L6C", "bad_seat"),
    ("bad_seat_negative", CH3, [], "-1:L6C", "bad_seat"),
    (
        "player_out",
        ("chuvash", ["6C", "7C 9D", "8D 10S"], "", {}),
        ["0:L6C", "1:C6C7C"],
        "0:P",
        "player_out",
    ),
    ("card_not_in_hand", CH3, [], "0:LAC", "card_not_in_hand"),
    ("card_not_in_hand_twice", CH3, [], "0:L6C6C", "card_not_in_hand"),
    ("wrong_phase_cover", CH3, [], "1:C6CKS", "wrong_phase"),
    ("wrong_phase_take", CH3, [], "1:K", "wrong_phase"),
    ("wrong_phase_lead", CH3, ["0:L6C"], "0:L7C", "wrong_phase"),
    ("not_your_turn", CH3, [], "1:LKS", "not_your_turn"),
    ("lead_one_card", SH3, [], "0:L7H7C", "lead_one_card"),
    ("lead_one_suit", CH3, [], "0:L6C6D", "lead_one_suit"),
    (
        "hand_limit_lead",
        ("chuvash", ["6C 7C 8C", "KS QS", "9H"], "", {}),
        [],
        "0:L6C7C8C",
        "hand_limit",
    ),
    (
        "hand_limit_throw",
        ("chuvash", ["6C 7C 8C 6D", "KS QS 9S", "6H"], "", {}),
        ["0:L6C7C8C", "1:C6CKS"],
        "0:T6D",
        "hand_limit",
    ),
    ("not_defender_cover", CH3, ["0:L6C"], "2:C6C7H", "not_defender"),
    ("not_defender_take", CH3, ["0:L6C"], "0:K", "not_defender"),
    ("not_defender_transfer", SH3, ["0:L7H"], "2:R7S", "not_defender"),
    ("already_taking", SH3, ["0:L7H", "1:K"], "1:C7HKC", "already_taking"),
    ("already_taking_take", SH3, ["0:L7H", "1:K"], "1:K", "already_taking"),
    ("already_taking_transfer", SH3, ["0:L7H", "1:K"], "1:R7D", "already_taking"),
    (
        "nothing_to_take",
        ("chuvash", ["6C 6D", "KS QS 9S", "6H"], "AC", {}),
        ["0:L6C", "1:C6CKS"],
        "1:K",
        "nothing_to_take",
    ),
    ("attack_not_on_table", CH3, ["0:L6C"], "1:C7CKS", "attack_not_on_table"),
    (
        "does_not_beat",
        ("chuvash", ["AC 6D", "KS 10D", "9H"], "", {}),
        ["0:LAC"],
        "1:CACKS",
        "does_not_beat",
    ),
    ("throw_in_closed", CH3, ["0:L6C"], "0:T6D", "throw_in_closed"),
    ("already_passed", CH3, ["0:L6C", "1:C6CKS", "0:P"], "0:T6D", "already_passed"),
    ("rank_not_on_table", CH3, ["0:L6C", "1:C6CKS"], "0:T7C", "rank_not_on_table"),
    ("not_your_priority", CH3, ["0:L6C", "1:C6CKS"], "2:T6H", "not_your_priority"),
    ("defender_cannot_throw", SH3, ["0:L7H"], "1:T7D", "defender_cannot_throw"),
    ("defender_cannot_pass", SH3, ["0:L7H"], "1:P", "defender_cannot_pass"),
    ("transfer_not_allowed_chuvash", CH3, ["0:L6C"], "1:R6C", "card_not_in_hand"),
    (
        "transfer_not_allowed_variant",
        ("chuvash", ["6C 7C", "6D KS", "9H"], "", {}),
        ["0:L6C"],
        "1:R6D",
        "transfer_not_allowed",
    ),
    (
        "transfer_not_allowed_after_cover",
        SH3,
        ["0:L7H", "1:C7H8H"],
        "1:R7D",
        "transfer_not_allowed",
    ),
    ("hand_limit_transfer", SH3, ["0:L7H", "1:R7D"], "2:R7S", "hand_limit"),
    ("wrong_rank", SH3, ["0:L7H"], "1:R8H", "wrong_rank"),
    ("not_trump", SH3, ["0:L7H"], "1:S7D", "not_trump"),
]

CASES += [
    (
        "must_defend_after_ticket",
        ("shchelkovsky", ["7H 7C 10H", "7S KC", "AD"], "4C 5S", {}),
        ["0:L7H", "1:S7S"],
        "0:R7C",
        "must_defend",
    ),
    (
        "must_defend_no_second_ticket",
        ("shchelkovsky", ["7H 7S 10H", "7S KC", "AD"], "4C 5S", {"decks": 2}),
        ["0:L7H", "1:S7S"],
        "0:S7S",
        "must_defend",
    ),
    (
        "throw_in_cap",
        (
            "shchelkovsky",
            [" ".join(["7C 7D 7H"] * 4), "AS KS QS JS 10S 9S 8S AH KH QH JH 10H", "3C"],
            "4D 5D",
            {"decks": 4},
        ),
        ["0:L7C", "1:K", "0:T7C7C7C7D7D7D7D7H7H"],
        "0:T7H7H",
        "throw_in_cap",
    ),
    ("no_cards_lead", CH3, [], "0:L", "no_cards"),
    (
        "no_cards_pass",
        ("chuvash", ["6D 7S", "7D 8D 8H", "6H"], "", {}),
        ["0:L6D", "1:C6D7D", "0:P", "2:T6H"],
        "2:P",
        "no_cards",
    ),
]


def build(game: tuple[str, list[str], str, dict[str, object]]) -> GameState:
    variant, hands, stock, options = game
    return deal(variant, hands, stock, options=options or None)


def act_raw(move: str) -> Action:
    # "0:L" (a lead without cards) is no valid text form: build it directly
    seat, _, rest = move.partition(":")
    if rest in ("L", "T"):
        return Action(int(seat), "lead" if rest == "L" else "throw", ())
    return Action.from_text(int(seat), rest)


@pytest.mark.parametrize(
    ("moves", "bad", "code", "game"),
    [pytest.param(m, b, code, g, id=name) for name, g, m, b, code in CASES],
)
def test_illegal_action_raises_code_and_changes_nothing(
    moves: list[str], bad: str, code: str, game: tuple[str, list[str], str, dict[str, object]]
) -> None:
    s = build(game)
    play(s, *moves)
    a = act_raw(bad)
    before = state_to_json(s)
    copy = s.copy()
    with pytest.raises(IllegalAction) as info:
        s.apply(a)
    assert info.value.code == code, info.value.message
    assert info.value.message
    assert state_to_json(s) == before
    assert s == copy
    assert a not in s.legal_actions(a.seat) if 0 <= a.seat < s.players else True


def test_illegal_every_api_code_is_exercised() -> None:
    assert {code for *_, code in CASES} == set(API_CODES)


def test_illegal_helper_rejects_card_not_in_hand_via_text() -> None:
    s = build(CH3)
    illegal(s, "0:L9H", "card_not_in_hand")


def test_illegal_legal_actions_all_apply_cleanly() -> None:
    # every listed action is accepted by check() on the same state
    s = build(SH3)
    play(s, "0:L7H")
    for seat in range(s.players):
        for a in s.legal_actions(seat):
            s.check(a)


@pytest.mark.parametrize(
    "action",
    [Action(1, "cover", (), 16), Action(1, "cover", (47, 43), 16), Action(1, "transfer", ())],
    ids=["cover_no_card", "cover_two_cards", "transfer_no_card"],
)
def test_illegal_hand_built_malformed_action(action: Action) -> None:
    s = build(CH3)
    play(s, "0:L6C")
    before = state_to_json(s)
    with pytest.raises(IllegalAction) as info:
        s.apply(action)
    assert info.value.code == "bad_action"
    assert state_to_json(s) == before
