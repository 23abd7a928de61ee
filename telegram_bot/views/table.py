"""What the group's table message and a spectator's message show: the public view of the table, the result once over."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from aiogram.types import InlineKeyboardButton, InlineKeyboardMarkup

from engine import public_view, view
from engine.verify import record_states
from tables.model import OVER, Seat, Table
from tables.rating_model import Settlement
from telegram_bot.buttons.callbacks import LobbyCb, LobbyOp, parse_lobby
from telegram_bot.buttons.moves import View
from telegram_bot.state.snapshot_value import Snapshot
from telegram_bot.views import texts
from telegram_bot.views.board import (
    HISTORY,
    ai_seats,
    deadline,
    deadline_lines,
    fit_text,
    header_lines,
    player_lines,
    rating_labels,
    seat_names,
    status_lines,
    table_lines,
    tg_time,
    warned_seats,
)
from telegram_bot.views.cards import CARDS_HELD
from telegram_bot.views.fair import (
    commitment_lines,
    commitment_shown,
    commitment_tag,
    with_replay,
    with_watch,
)
from telegram_bot.views.format import bold, history_lines, name_of
from telegram_bot.views.i18n import LOSER_TITLES, N_, VARIANT_TITLES, Translator, duration
from telegram_bot.views.keyboards import PRIVATE_MARK, Screen, cards_row
from telegram_bot.views.miniapp import MiniApp, group_replay_button, with_app_button


# ------------------------------------------------------------------ group table
def render_table(
    view: View,
    *,
    locale: str,
    names: Sequence[str],
    deadline: datetime | None = None,
    bot_username: str | None = None,
    history: int = HISTORY,
    ai_seats: Collection[int] = (),
    code: str | None = None,
    warned: Collection[int] = (),
    ratings: Sequence[str] = (),
) -> tuple[str, InlineKeyboardMarkup | None]:
    """The group's table message from the public view (``ai_seats``: human seats
    the AI plays now): no hand, no legal actions; optionally a button that opens
    the private chat with the bot (the hands) -- with the table's ``code``
    (issue 14) that button shows the presser's hand
    in the group, only to him, and *Private chat* opens it in the private chat."""
    _ = Translator(locale)
    head = (
        header_lines(view, _)
        + table_lines(view, names, _)
        + player_lines(view, names, _, -1, ai_seats, warned, ratings)
    )
    tail = deadline_lines(deadline, _) + status_lines(view, names, _, -1)
    text = fit_text(head, history_lines(view, names, _, history), tail, _)
    if not bot_username:
        return text, None
    url = f"https://t.me/{bot_username}"
    label = CARDS_HELD + " " + _("My cards")
    if code is None:
        row = [InlineKeyboardButton(text=label, url=url)]
    else:
        row = cards_row(code, bot_username, label, PRIVATE_MARK + " " + _("Private chat"))
    return text, InlineKeyboardMarkup(inline_keyboard=[row])


# ------------------------------------------------------------------ game over
def render_game_over(
    view: View,
    *,
    locale: str,
    names: Sequence[str],
    code: str | None = None,
    settlement: Settlement | None = None,
    places: Sequence[int] = (),
    game: int = 0,
    offer: Sequence[str] = (),
    arena: bool = False,
) -> tuple[str, InlineKeyboardMarkup | None]:
    """The result: finish order and the loser («чувашский петух» / «дурак») or a
    draw; what the game did to the ratings (#25); a *Rematch* button when the
    lobby ``code`` is given (for ``game``, its number: pressed after the next
    game started, it is answered as stale, #38).  ``places``: each seat's place
    as the game's result has it (a draw's last players share one, #38); else
    the order they went out.  ``offer``: the rematch offer's lines
    (:func:`rematch_lines`).  ``arena``: an arena's game, whose places score
    arena points -- said instead of its ratings (it has none, #41)."""
    _ = Translator(locale)
    title = _(VARIANT_TITLES[view["variant"]])
    lines = [bold(_("Game over")) + " · " + title, ""]
    for i, seat in enumerate(view["out"]):
        place = places[seat] if seat < len(places) else i + 1
        lines.append(f"{place}. {name_of(names, seat, _)}")
    if view["draw"]:
        lines += ["", "🤝 " + draw_line(view, names, places, _)]
    elif view["loser"] is not None:
        loser = name_of(names, view["loser"], _)
        icon = "🐓" if view["variant"] == "chuvash" else "🤡"
        what = _(LOSER_TITLES[view["variant"]])
        lines += ["", f"{icon} " + _("<b>{name}</b> is {title}!", name=loser, title=what)]
    if arena:
        lines += ["", "🏟 " + _(texts.ARENA_RESULT)]
    else:
        lines += rating_lines(settlement, names, _, view.get("seat"))
    lines += offer
    text = "\n".join(lines)
    if code is None:
        return text, None
    data = LobbyCb(code=code, op=LobbyOp.REMATCH, arg=str(game) if game else "").pack()
    markup = InlineKeyboardMarkup(
        inline_keyboard=[[InlineKeyboardButton(text="🔁 " + _("Rematch"), callback_data=data)]]
    )
    return text, markup


DRAW_LINES = {
    "chuvash": N_("A draw: {names} went out together, so there is no Chuvash Rooster this time."),
    "shchelkovsky": N_("A draw: {names} went out together, so there is no durak this time."),
}
"""A draw's line (RULES §0 Game over: nobody holds cards, so there is no loser,
C14 / S14), naming the players who went out in the last bout together."""


def draw_line(view: View, names: Sequence[str], places: Sequence[int], _: Translator) -> str:
    """Who drew: the players who share the last place the result gives (#38:
    those who went out in the last bout); without the result's places, only
    that the game is a draw."""
    out = [s for s in view["out"] if s < len(places)]
    last = max((places[s] for s in out), default=0)
    tied = [s for s in out if places[s] == last]
    if len(tied) < 2:
        return _("The game is a draw")
    who = [name_of(names, s, _) for s in tied]
    together = _("{names} and {last}", names=", ".join(who[:-1]), last=who[-1])
    return _(DRAW_LINES[view["variant"]], names=together)


NOT_COUNTED = {
    "pair_limit": N_("Not rated: the same players' rated games count only a few times a day."),
    "pair_diversity": N_(
        "Not rated: two players count against each other only once each has also "
        "played a few other people lately."
    ),
    "abandoned": N_("Not rated: everyone left the game."),
    "operator": N_("Not rated: an operator handed a seat to the AI."),
    "new_players": N_(
        "Not rated: a new player's games count once they have played a few games with "
        "other people over a couple of days."
    ),
}


def rating_lines(
    s: Settlement | None, names: Sequence[str], _: Translator, me: object = None
) -> list[str]:
    """Each player's rating after the game and its change («Alice 1252 (+12)»), or
    why a rated game did not count; to the reader himself, the cooldown his
    walking away earned (#25)."""
    if s is None:
        return []
    lines: list[str] = []
    if s.counted:
        lines += ["", "🏆 " + bold(_("Ratings"))]
        for c in sorted(s.changes, key=lambda c: -c.after):
            label = f"{c.after}?" if c.provisional else str(c.after)
            delta = f"+{c.delta}" if c.delta >= 0 else f"−{-c.delta}"
            lines.append(f"{name_of(names, c.seat, _)} {label} ({delta})")
    elif s.why in NOT_COUNTED:
        lines += ["", "🎲 " + _(NOT_COUNTED[s.why])]
    if s.counted and s.fresh:  # #38: whom it did not rate, and why
        who = ", ".join(name_of(names, seat, _) for seat in s.fresh)
        lines.append("🆕 " + _("Not rated yet (new players): {names}.", names=who))
    if s.counted:
        for a, b in s.capped:
            lines.append("⏸ " + _(
                "{a} and {b}: their result against each other did not count (the same two "
                "count only a few times a day).",
                a=name_of(names, a, _),
                b=name_of(names, b, _),
            ))  # fmt: skip
        for a, b in s.narrow:  # #38, the opponent-diversity guard
            lines.append("🤝 " + _(
                "{a} and {b}: their result against each other did not count (each must "
                "also have played a few other people lately).",
                a=name_of(names, a, _),
                b=name_of(names, b, _),
            ))  # fmt: skip
    mine = next((c.user for c in s.changes if c.seat == me), None) if isinstance(me, int) else None
    if mine is not None and mine in s.offences:
        wait = int(s.offences[mine])
        if wait:
            lines += ["", "⏳ " + _(
                "You did not play a rated game to the end: you can play rated games again "
                "in {time}.",
                time=duration(wait, _),
            )]  # fmt: skip
        else:
            lines += ["", "⚠ " + _(
                "You did not play a rated game to the end. If it happens again within "
                "3 days, you will have to wait before your next rated game."
            )]  # fmt: skip
    return lines


def table_screen(
    snap: Snapshot, bot_username: str, *, first: bool = False, app: MiniApp | None = None
) -> Screen:
    """The group's table message: the public view (the result once over); the
    deal's commitment whole in its ``first`` version, sent at the game's start,
    then its short tag (#41).  ``app``: the Mini App (#42, None: off) -- a
    last row opens the table there (the app's direct link, or the private
    chat: a group refuses a ``web_app`` button)."""
    t, state = snap.table, snap.loaded.state
    assert state is not None
    lang = snap.ui.group_lang or "en"
    pv = public_view(state)
    if t.status == OVER or state.over:
        return game_over_screen(snap, pv, lang, app)
    text, markup = render_table(
        pv,
        locale=lang,
        names=seat_names(t, lang),
        deadline=deadline(snap),
        bot_username=bot_username,
        ai_seats=ai_seats(t),
        code=t.id,
        warned=warned_seats(t),
        ratings=rating_labels(t),
    )
    _ = Translator(lang)
    markup = with_app_button(with_watch(markup, t, _), app, t.id, _, in_group=True)
    return text + "\n\n" + commitment_shown(t, _, first=first), markup


def watch_screen(snap: Snapshot, lang: str, app: MiniApp | None = None) -> Screen:
    """A spectator's private message (issue #16): the public view, as the group's
    table message shows it -- never a hand; the result and *Replay* once over.
    ``app``: the Mini App (#42, None: off) -- while the game is on, a ``web_app``
    button opens the table there (his private chat: a spectator's view)."""
    t, state = snap.table, snap.loaded.state
    assert state is not None
    pv = public_view(state)
    _ = Translator(lang)
    if t.status == OVER or state.over:
        names = seat_names(t, lang)
        text, _markup = render_game_over(
            pv,
            locale=lang,
            names=names,
            settlement=snap.settlement,
            places=result_places(snap),
            arena=bool(t.arena),
        )
        if snap.loaded.result is None:  # ended by an operator: nothing to replay or check
            return text, None
        return text + "\n\n" + commitment_lines(t, _), with_replay(None, t, _)
    text, _none = render_table(
        pv,
        locale=lang,
        names=seat_names(t, lang),
        deadline=deadline(snap),
        ai_seats=ai_seats(t),
        warned=warned_seats(t),
        ratings=rating_labels(t),
    )
    markup = with_app_button(None, app, t.id, _, in_group=False)
    return "👀 " + text + "\n\n" + commitment_tag(t, _), markup


def result_places(snap: Snapshot) -> tuple[int, ...]:
    """Each seat's place in the game just over, from its result (a draw's last
    players share one, #38); none when it has no result (an operator ended it)."""
    res = snap.loaded.result
    return res.places if res is not None and res.game == snap.table.game_no else ()


def rematch_lines(t: Table, names: Sequence[str], _: Translator) -> list[str]:
    """The rematch offered on the finished table (#38): who agreed, whom it
    waits for, when it ends -- then the game starts with those who agreed, the
    AI in the other seats (a casual game)."""
    offer = t.rematch
    if offer is None or t.status != OVER:
        return []
    seats = [i for u in offer.agreed if (i := t.player_seat(u)) is not None]
    agreed = ", ".join(name_of(names, i, _) for i in seats)
    present = set(t.present())
    waiting = ", ".join(
        name_of(names, i, _)
        for i, s in enumerate(t.seats)
        if s.user in present and s.user not in offer.agreed
    )
    when = tg_time(datetime.fromtimestamp(offer.until / 1000, UTC))
    lines = ["", "🔁 " + _("<b>Rematch</b> · agreed: {names}", names=agreed)]
    if waiting:
        lines.append("⏳ " + _("Waiting for {names}", names=waiting))
    lines.append(
        "⏱ " + _("the offer ends {time}: then the game starts with those who agreed.", time=when)
    )
    if any(s.human and s.user not in offer.agreed for s in t.seats):
        lines.append(_("The AI takes the seats of the others, and that game is not rated."))
    return lines


def game_over_screen(
    snap: Snapshot, v: dict[str, object], lang: str, app: MiniApp | None = None
) -> Screen:
    """The result; *Rematch*, *Replay* and *Check the deal* (issue #16): the seed
    and the command that checks it are behind the last, not in the result (#29);
    the deal's commitment, as the game's first message showed it (#41).
    An arena's table has no *Rematch* (#38): the arena seats its players again.
    ``app``: the Mini App with a short name -- a last row opens the replay in
    its viewer, in place (#42)."""
    t = snap.table
    code = None if t.arena or t.stopped else t.id  # #38: a lost group's has no rematch
    names = seat_names(t, lang)
    res = snap.loaded.result
    if res is not None and res.game == t.game_no:
        # the result's loser: a forfeit (#38) ends the game before the cards do
        v = {**v, "loser": res.loser, "draw": res.draw}
        if t.stopped:  # forfeited: the others by their places, the loser below them
            rest = [s for s in range(len(res.places)) if s != res.loser]
            v["out"] = sorted(rest, key=lambda s: res.places[s])
    text, markup = render_game_over(
        v,
        locale=lang,
        names=names,
        code=code,
        settlement=snap.settlement,
        places=result_places(snap),
        game=t.game_no,
        offer=rematch_lines(t, names, Translator(lang)),
        arena=bool(t.arena),
    )
    _ = Translator(lang)
    if snap.loaded.result is None:  # ended by an operator: no record to replay or check
        return text, markup
    # the commitment whole again (#41), where *Check the deal* reveals its key
    markup = with_replay(markup, t, _)
    viewer = group_replay_button(app, t.id, t.game_no, _) if app is not None else None
    if viewer is not None:
        markup = InlineKeyboardMarkup(inline_keyboard=[*markup.inline_keyboard, [viewer]])
    return text + "\n\n" + commitment_lines(t, _), markup


def previous_game(
    snap: Snapshot, record: Mapping[str, Any], settlement: Settlement | None
) -> Snapshot:
    """The game before ``snap``'s (a rematch was dealt since) as it ended, from
    its kept ``record`` (``Replays.record``) and what it did to the ratings:
    its last state, seats, deal and result -- what its result messages showed,
    without the rematch offer, which is over.  Raises
    :class:`engine.EngineError` for a bad record."""
    t = snap.table
    final = record_states(record)[-1]
    kinds = record.get("ai") or []
    seats = tuple(
        Seat(user=u, name=n, ai=kinds[i] if u is None and i < len(kinds) else None)
        for i, (u, n) in enumerate(record.get("seats") or [])
    )
    seed = record["seed"]
    old = replace(
        t,
        status=OVER,
        game_no=int(record["game"]),
        seed=int(seed) if str(seed).isdigit() else seed,
        seats=seats or t.seats,
        rematch=None,
    )
    loaded = replace(snap.loaded, table=old, state=final)
    return replace(snap, loaded=loaded, settlement=settlement)


def rematch_started_screen(old: Snapshot, seat: int | None, lang: str) -> Screen:
    """A result message once its rematch started (#41): the result as it ended
    (``seat``'s own view, or the public one), no *Rematch* and no offer, and a
    line that the new game is below."""
    state = old.loaded.state
    assert state is not None
    v = public_view(state) if seat is None else view(state, seat)
    text, markup = game_over_screen(old, v, lang)
    _ = Translator(lang)
    rows = [
        [b for b in row if not _is_rematch(b)]
        for row in (markup.inline_keyboard if markup is not None else [])
    ]
    rows = [row for row in rows if row]
    kept = InlineKeyboardMarkup(inline_keyboard=rows) if rows else None
    return text + "\n\n🔁 " + _(texts.REMATCH_STARTED), kept


def _is_rematch(button: InlineKeyboardButton) -> bool:
    cb = parse_lobby(button.callback_data)
    return cb is not None and cb.op is LobbyOp.REMATCH
