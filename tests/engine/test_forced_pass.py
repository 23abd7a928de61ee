"""GameState.forced_pass: PASS is all a thrower may do until the table changes
(RULES §0 Passing, Throw-in priority), the test the service's auto-pass uses."""

from __future__ import annotations

from engine import Action, GameState, from_deal, parse_cards


def deal(hands: list[str]) -> GameState:
    return from_deal("chuvash", None, [parse_cards(h.split()) for h in hands], [], first_attacker=0)


def test_a_thrower_without_a_rank_on_the_table_is_forced_to_pass() -> None:
    g = deal(["6C 7D", "7C 8C AS KS", "9S", "7H QH"])
    g.apply(Action.from_text(0, "L6C"))
    assert not any(g.forced_pass(s) for s in range(4))  # C10: no throw-ins yet
    g.apply(Action.from_text(1, "C6C7C"))
    assert g.priority() == 0
    assert not g.forced_pass(0)  # holds 7D: may throw it in
    assert g.forced_pass(2)  # 9S: nothing of 6 or 7
    # waits for priority but holds 7H: his only move now is PASS, yet he is not forced
    assert [a.text() for a in g.legal_actions(3)] == ["P"]
    assert not g.forced_pass(3)
    assert not g.forced_pass(1)  # the defender never passes


def test_no_room_left_forces_a_pass() -> None:
    g = deal(["6C 6D 8D", "8C 9C", "7D"])
    g.apply(Action.from_text(0, "L6C"))
    g.apply(Action.from_text(1, "C6C8C"))
    assert not g.forced_pass(0)  # 6D and 8D match the table, and there is room
    g.apply(Action.from_text(0, "T6D"))  # the defender holds one card: no more room
    assert [a.text() for a in g.legal_actions(0)] == ["P"]
    assert g.forced_pass(0)  # still holds 8D, a rank on the table, but no room (§0)
    assert g.forced_pass(2)


def test_only_no_room_forces_a_pass_in_sight() -> None:
    """The auto-pass's test (``forced_pass_in_sight``): no room is a reason
    everyone sees; no rank on the table is the seat's hidden cards' (review
    "leaks")."""
    g = deal(["6C 7D", "7C 8C AS KS", "9S", "7H QH"])
    g.apply(Action.from_text(0, "L6C"))
    g.apply(Action.from_text(1, "C6C7C"))
    assert g.forced_pass(2)  # 9S: nothing of 6 or 7 ...
    assert not g.forced_pass_in_sight(2)  # ... which nobody else may learn
    g = deal(["6C 6D 8D", "8C 9C", "7D"])
    g.apply(Action.from_text(0, "L6C"))
    g.apply(Action.from_text(1, "C6C8C"))
    g.apply(Action.from_text(0, "T6D"))  # the defender holds one card: no more room
    assert g.forced_pass_in_sight(0)
    assert g.forced_pass_in_sight(2)
    assert not g.forced_pass_in_sight(1)  # the defender never passes
