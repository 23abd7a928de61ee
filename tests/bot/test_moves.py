"""telegram_bot.buttons.moves: (view, selection, press) -> action, new selection or error."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

import engine
from engine import Action, GameState, from_deal, parse_cards
from engine.cards import card_names, parse_card_run
from telegram_bot.buttons.callbacks import BACK, CLEAR, PLAY, Press, act, page, press_card
from telegram_bot.buttons.moves import (
    ERR_BAD_SELECTION,
    ERR_CANNOT_PLAY,
    ERR_DEFENDER_LIMIT,
    ERR_NOT_IN_HAND,
    ERR_NOT_LEGAL,
    ERR_NOT_YOUR_TURN,
    ERR_THROW_LIMIT,
    Outcome,
    Selection,
    View,
    card_moves,
    clean,
    drawn_for,
    playable,
    resolve,
    selection_action,
    stamp,
    throw_room,
    written,
)

NONE = Selection()


def deal(
    variant: str,
    hands: list[str],
    stock: Sequence[str] = (),
    first: int = 0,
    options: Mapping[str, Any] | None = None,
    trump: int | None = None,
) -> GameState:
    return from_deal(
        variant,
        options,
        [parse_cards(h.split()) for h in hands],
        parse_cards(list(stock)),
        trump=trump,
        first_attacker=first,
    )


def play(state: GameState, seat: int, text: str) -> None:
    state.apply(Action.from_text(seat, text))


def tap(state: GameState, seat: int, *presses: Press, sel: Selection | None = NONE) -> Outcome:
    """Press buttons in turn; return the last outcome (selections carried over)."""
    out = Outcome(selection=sel)
    for p in presses:
        assert out.selection is not None, out
        out = resolve(engine.view(state, seat), out.selection, p)
    return out


def selected(out: Outcome) -> Selection:
    """The selection an outcome carries (an outcome with none fails the test)."""
    assert out.selection is not None, out
    return out.selection


# ------------------------------------------------------------------ leads
def test_shchelkovsky_lead_is_one_tap() -> None:
    g = deal("shchelkovsky", ["7S 9H", "8S 2C"], ["AD"], options={"decks": 2})
    assert tap(g, 0, press_card("9H")) == Outcome(action="L9H")


def test_chuvash_lead_that_cannot_be_ambiguous_is_one_tap() -> None:
    # #24: a card no lead of several cards can hold -- the only one of its
    # suit, or a defender with one card (C6: at most as many as he holds) --
    # is led by one tap: Play could make nothing else of it
    g = deal("chuvash", ["6C 7C KS", "8S 9S 10S AH 6D 7D"])
    assert tap(g, 0, press_card("KS")) == Outcome(action="LKS")
    g = deal("chuvash", ["6C 7C 9C", "AS"])
    assert tap(g, 0, press_card("6C")) == Outcome(action="L6C")
    # one of several of its suit: toggled, then Play (a lead of one or more)
    g = deal("chuvash", ["6C 7C KS", "8S 9S 10S AH 6D 7D"])
    out = tap(g, 0, press_card("6C"))
    assert out == Outcome(selection=Selection(cards=("6C",)))
    assert tap(g, 0, PLAY, sel=out.selection) == Outcome(action="L6C")


def test_chuvash_lone_card_while_choosing_starts_a_new_choice() -> None:
    # he is choosing clubs: a tap of his lone spade does not play behind his back
    g = deal("chuvash", ["6C 7C KS", "8S 9S 10S AH 6D 7D"])
    out = tap(g, 0, press_card("6C"), press_card("KS"))
    assert out == Outcome(selection=Selection(cards=("KS",)))
    assert tap(g, 0, PLAY, sel=out.selection) == Outcome(action="LKS")


def test_a_one_tap_chuvash_lead_is_the_only_lead_with_that_card() -> None:
    """Over random Chuvash leads: whenever one tap (nothing chosen) plays a
    card, no other legal lead holds that card -- never a mis-lead (#24)."""
    seed = random.randrange(10**6)
    print(f"seed {seed}")
    rng = random.Random(seed)
    one_tap = 0
    for _ in range(300):
        deck = [f"{r}{s}" for r in ("6", "7", "8", "9", "10", "J", "Q", "K", "A") for s in "CDHS"]
        rng.shuffle(deck)
        n = rng.randint(1, 6)
        g = deal("chuvash", [" ".join(deck[:6]), " ".join(deck[6 : 6 + n])])
        v = engine.view(g, 0)
        leads = [t for t in v["legal"] if t.startswith("L")]
        for card in v["hand"]:
            out = resolve(v, NONE, press_card(card))
            if out.action is None:
                continue
            one_tap += 1
            assert out.action == "L" + card
            with_it = [t for t in leads if card in card_names(parse_card_run(t[1:]))]
            assert with_it == [out.action], (seed, card, with_it)
    assert one_tap > 0


def test_chuvash_multi_card_lead_by_toggling_then_play() -> None:
    g = deal("chuvash", ["6C 7C 9C KS", "8S 9S 10S AH 6D 7D"])
    out = tap(g, 0, press_card("6C"))
    assert out.selection == Selection(cards=("6C",))
    out = tap(g, 0, press_card("9C"), sel=out.selection)
    assert selected(out).cards == ("6C", "9C")
    assert selection_action(engine.view(g, 0), selected(out).cards) == "L6C9C"
    assert tap(g, 0, PLAY, sel=out.selection) == Outcome(action="L6C9C")
    # untoggle, then Play with a single card is a one-card lead
    out = tap(g, 0, press_card("6C"), sel=out.selection)
    assert selected(out).cards == ("9C",)
    assert tap(g, 0, PLAY, sel=out.selection) == Outcome(action="L9C")
    assert tap(g, 0, CLEAR, sel=out.selection) == Outcome(selection=Selection())


def test_chuvash_other_suit_starts_a_new_selection() -> None:
    g = deal("chuvash", ["6C 7C 9H 10H", "8S 9S 10S AH 6D 7D"])
    out = tap(g, 0, press_card("6C"), press_card("9H"))
    assert selected(out).cards == ("9H",)


def test_chuvash_lead_limited_by_defender_hand() -> None:
    g = deal("chuvash", ["6C 7C 9C", "AS KS"])  # C6: at most as many as the defender holds
    two = tap(g, 0, press_card("6C"), press_card("7C"))
    assert selected(two).cards == ("6C", "7C")
    out = tap(g, 0, press_card("9C"), sel=two.selection)
    # a third club cannot join: he is told why and keeps his two (issue 13)
    assert out == Outcome(error=ERR_DEFENDER_LIMIT, error_args={"n": 2})
    assert tap(g, 0, PLAY, sel=Selection(cards=("6C", "7C", "9C"))).error == ERR_BAD_SELECTION


# ------------------------------------------------------------------ defence
def test_cover_of_the_only_attack_it_beats_is_one_tap() -> None:
    g = deal("chuvash", ["6C 10S", "7C 8D QH 6S"])
    play(g, 0, "L6C")
    assert tap(g, 1, press_card("7C")) == Outcome(action="C6C7C")
    assert tap(g, 1, press_card("6S")) == Outcome(action="C6C6S")  # C4: higher suit, equal rank


def test_a_card_that_beats_several_attacks_offers_a_choice() -> None:
    g = deal("chuvash", ["6C 7C 10S", "8C 8D QH 6S AS KH"])
    play(g, 0, "L6C7C")
    v = engine.view(g, 1)
    out = tap(g, 1, press_card("8C"))
    assert out.selection == Selection(choose="8C")
    assert card_moves(v, "8C") == ["C6C8C", "C7C8C"]
    assert tap(g, 1, BACK, sel=out.selection) == Outcome(selection=Selection())
    assert tap(g, 1, act("C7C8C"), sel=out.selection) == Outcome(action="C7C8C")


def test_card_that_beats_nothing() -> None:
    g = deal("chuvash", ["9C 10S", "6C 7D QH 6S 7S 8S"])
    play(g, 0, "L9C")
    assert tap(g, 1, press_card("6C")).error == ERR_CANNOT_PLAY
    assert tap(g, 1, press_card("AH")).error == ERR_NOT_IN_HAND
    assert "6C" not in playable(engine.view(g, 1))
    assert tap(g, 1, act("K")) == Outcome(action="K")


def test_transfer_only_is_one_tap_and_cover_plus_transfer_is_a_choice() -> None:
    # trump clubs (bottom 2C); 7H beats nothing on 7S but transfers it (S8)
    g = deal("shchelkovsky", ["7S 3D", "7H 4D 5D", "9D 10D JD QD"], ["2C"], options={"decks": 2})
    play(g, 0, "L7S")
    assert tap(g, 1, press_card("7H")) == Outcome(action="R7H")
    # trump hearts: 7H also covers 7S, and it is the pass-ticket trump of rank 7
    g = deal("shchelkovsky", ["7S 3D", "7H 4D 5D", "9D 10D JD QD"], ["2H"], options={"decks": 2})
    play(g, 0, "L7S")
    v = engine.view(g, 1)
    assert set(card_moves(v, "7H")) == {"C7S7H", "R7H", "S7H"}
    assert tap(g, 1, press_card("7H")) == Outcome(selection=Selection(choose="7H"))


# ------------------------------------------------------------------ throw-ins
def test_throw_in_one_or_several_cards() -> None:
    g = deal("chuvash", ["6C 6D 6H 10S", "7C 8C AS KS QS JS"])
    play(g, 0, "L6C")
    play(g, 1, "C6C7C")
    v = engine.view(g, 0)
    assert throw_room(v) == 5
    out = tap(g, 0, press_card("6D"))
    assert selected(out).cards == ("6D",)
    out = tap(g, 0, press_card("6H"), sel=out.selection)
    assert tap(g, 0, PLAY, sel=out.selection) == Outcome(action="T6D6H")
    assert tap(g, 0, press_card("10S")).error == ERR_CANNOT_PLAY
    assert tap(g, 0, act("P")) == Outcome(action="P")
    assert tap(g, 0, act("T6D6H")) == Outcome(action="T6D6H")  # several at once
    assert tap(g, 0, act("T10S")).error == ERR_NOT_LEGAL


def test_one_throw_in_too_many_is_told_and_keeps_the_selection() -> None:
    # the defender holds 2 cards after covering: room for 1 more uncovered card
    g = deal("chuvash", ["6C 6D 6H 10S", "7C 8C AS"])
    play(g, 0, "L6C")
    play(g, 1, "C6C7C")
    assert throw_room(engine.view(g, 0)) == 2
    two = tap(g, 0, press_card("6D"), press_card("6H"))
    assert selected(two).cards == ("6D", "6H")
    g2 = deal("chuvash", ["6C 6D 6H 6S", "7C 8C AS"])
    play(g2, 0, "L6C")
    play(g2, 1, "C6C7C")
    two = tap(g2, 0, press_card("6D"), press_card("6H"))
    out = tap(g2, 0, press_card("6S"), sel=two.selection)
    assert out == Outcome(error=ERR_THROW_LIMIT, error_args={"n": 2})


def test_only_throwable_card_is_one_tap() -> None:
    g = deal("chuvash", ["6C 6D 10S", "7C 8C AS KS QS JS"])
    play(g, 0, "L6C")
    play(g, 1, "C6C7C")
    assert tap(g, 0, press_card("6D")) == Outcome(action="T6D")


def test_identical_cards_toggle_one_copy_at_a_time() -> None:
    g = deal(
        "shchelkovsky",
        ["5S 5S 5H 9D", "6H 7D 8D 9C 10C JC"],
        ["2C"],
        options={"decks": 2},
    )
    play(g, 0, "L5H")
    play(g, 1, "C5H6H")
    out = tap(g, 0, press_card("5S"))
    assert selected(out).cards == ("5S",)
    out = tap(g, 0, press_card("5S"), sel=out.selection)
    assert selected(out).cards == ("5S", "5S")
    assert tap(g, 0, PLAY, sel=out.selection) == Outcome(action="T5S5S")
    out = tap(g, 0, press_card("5S"), sel=out.selection)
    assert selected(out).cards == ()


def test_not_your_turn() -> None:
    g = deal("chuvash", ["6C 7C", "8S 9S"])
    assert tap(g, 1, press_card("8S")).error == ERR_NOT_YOUR_TURN
    assert tap(g, 1, act("K")).error == ERR_NOT_YOUR_TURN
    assert tap(g, 1, page(2)) == Outcome(selection=Selection(page=2))


def test_clean_drops_what_left_the_hand() -> None:
    g = deal("chuvash", ["6C 7C 9C KS", "8S 9S 10S AH 6D 7D"])
    v = engine.view(g, 0)
    assert clean(v, Selection(cards=("6C", "AH", "6C"), choose="ZZ", page=1)) == Selection(
        cards=("6C",), page=1
    )
    assert Selection.from_json(Selection(("6C",), "7C", 2).to_json()) == Selection(("6C",), "7C", 2)
    assert Selection.from_json({"cards": "x", "page": -3}) == Selection()
    assert Selection.from_json(None) == Selection()


def test_a_selection_remembers_its_last_writes() -> None:
    """#38 (22): each write records its press and the cards it touched (kept in
    the JSON, kept by clean); a card press of an older keyboard still means what
    it meant while no known write since touched its card."""
    g = deal("chuvash", ["6C 7C 9C KS", "8S 9S 10S AH 6D 7D"])
    v = engine.view(g, 0)
    one = written(NONE, Selection(cards=("6C",)), press_card("6C"), "cb1")
    two = written(one, Selection(cards=("6C", "7C")), press_card("7C"), "cb2")
    assert [(a.request_id, a.rev, a.cards) for a in two.applied] == [
        ("cb1", 1, ("6C",)),
        ("cb2", 2, ("7C",)),
    ]
    assert Selection.from_json(two.to_json()).applied == two.applied
    assert clean(v, two).applied == two.applied
    assert two.has_applied("cb1")
    assert not two.has_applied("cb3")
    assert not two.has_applied("")
    assert drawn_for(two, "2", PLAY)
    assert not drawn_for(two, "1", PLAY)
    assert drawn_for(two, "0", press_card("9C"))  # neither write touched it
    assert not drawn_for(two, "0", press_card("7C"))  # the second write did
    assert drawn_for(two, "1", press_card("6C"))
    assert not drawn_for(two, "0", press_card("6C"))
    assert not drawn_for(two, "", press_card("9C"))  # a keyboard without a revision
    assert not drawn_for(two, "5", press_card("9C"))  # a revision it never had
    cleared = written(two, Selection(), CLEAR, "cb3")  # touches whatever it drops
    assert cleared.applied[-1].cards == ("6C", "7C")
    assert not drawn_for(cleared, "2", press_card("6C"))
    # past the revisions a keyboard carries (mod 100), writes it no longer knows
    far = Selection(cards=("6C",), rev=101, applied=one.applied)
    assert not drawn_for(far, "0", press_card("9C"))
    many = NONE
    for n in range(103):
        many = written(many, NONE, press_card("KS"), f"cb{n}")
    assert (many.rev, many.token, len(many.applied)) == (103, "3", 10)
    assert many.has_applied("cb102")
    assert not many.has_applied("cb92")
    assert not drawn_for(many, "2", press_card("KS"))
    assert drawn_for(many, "2", press_card("9C"))
    assert not drawn_for(many, "90", press_card("9C"))  # older than the writes it keeps


# ------------------------------------------------------------------ random games
@pytest.mark.parametrize(
    ("variant", "players", "options"),
    [
        ("chuvash", 2, None),
        ("chuvash", 4, None),
        ("shchelkovsky", 3, {"decks": 2}),
        ("shchelkovsky", 6, {"decks": 4}),
    ],
)
def test_every_press_of_a_playable_card_is_sound(
    variant: str, players: int, options: dict[str, Any] | None
) -> None:
    """In random games: a playable card's press never errs; every action the
    mapping produces is legal (the engine applies it); Play after toggling too."""
    for seed in range(4):
        rng = random.Random(seed)
        g = engine.new_game(variant, players, seed=seed, options=options)
        steps = 0
        while not g.over and steps < 150:
            steps += 1
            for seat in range(players):
                v = engine.view(g, seat)
                for card in sorted(playable(v)):
                    out = resolve(v, NONE, press_card(card))
                    assert out.error is None, (seed, steps, seat, card, out)
                    if out.action:
                        g.copy().apply(Action.from_text(seat, out.action))
                    elif out.selection and selected(out).cards:
                        text = resolve(v, out.selection, PLAY).action
                        if text:
                            g.copy().apply(Action.from_text(seat, text))
                    else:
                        assert out.selection
                        assert out.selection.choose == card
                        for m in card_moves(v, card):
                            g.copy().apply(Action.from_text(seat, m))
            seat = rng.choice(g.to_act())
            g.apply(rng.choice(g.legal_actions(seat)))


# ------------------------------------------------------------------ stamps
def _presses(v: View) -> list[Press]:
    """Every press the seat's keyboard could offer now."""
    return [press_card(c) for c in sorted(set(v["hand"]))] + [act(t) for t in v["legal"]]


@pytest.mark.parametrize(
    ("variant", "players", "options"),
    [("chuvash", 6, None), ("shchelkovsky", 4, {"decks": 2})],
)
def test_an_unchanged_stamp_means_every_press_means_the_same(
    variant: str, players: int, options: dict[str, Any] | None
) -> None:
    """The handler honours a button of an older version when the presser's stamp is
    unchanged: sound only if every press then resolves exactly as it did.  His own
    move always changes his stamp (a double tap is stale)."""
    kept = 0
    for seed in range(3):
        rng = random.Random(seed)
        g = engine.new_game(variant, players, seed=seed, options=options)
        before = [engine.view(g, s) for s in range(players)]
        steps = 0
        while not g.over and steps < 120:
            steps += 1
            mover = rng.choice(g.to_act())
            g.apply(rng.choice(g.legal_actions(mover)))
            after = [engine.view(g, s) for s in range(players)]
            assert stamp(after[mover]) != stamp(before[mover]), (seed, steps)
            for seat in range(players):
                old, new = before[seat], after[seat]
                assert len(stamp(new)) == 6
                if stamp(old) != stamp(new):
                    continue
                kept += 1
                for p in _presses(old):
                    assert resolve(old, NONE, p) == resolve(new, NONE, p), (seed, steps, seat, p)
            before = after
    assert kept > 50  # other seats' stamps often survive a move
