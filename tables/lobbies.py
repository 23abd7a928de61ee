"""The lobbies part: create, join, leave, AI seats, settings, cancel.

Rules (enforced here, documented for the bot):

* A user sits at **at most one active table** -- an open lobby or a game in
  progress.  Creating or joining another raises ``seated_elsewhere`` naming the
  table (``info["table"]``, ``info["status"]``, ``info["chat"]``); a finished or
  cancelled table does not count.  Joining the table where he already sits is a
  no-op.
* The invite code is the table id: ``secrets.token_urlsafe(8)`` -- 11 characters
  of ``A-Za-z0-9_-`` (64 random bits), fit for ``t.me/<bot>?start=<code>``.
* The lobby's **owner** is its creator (seat 0; when he leaves, the next human
  becomes the owner).  Only the owner adds or removes AI seats, changes the
  settings, cancels and starts the first game (at least two seats); anyone else
  seated gets ``not_owner``, a stranger ``not_seated``.  Any player of the last
  game may ask for a rematch.
* Settings (variant, options, max seats, turn timer) are validated by
  ``engine.find_variant(...).options(...)`` and the variant's player range; max
  seats may not drop below the seats taken.  A rated lobby always has a turn
  timer (#38): asked for none (0), or turned rated without one, it gets
  :data:`~tables.model.RATED_TIMER` -- decided in the plan, on the table the
  compare-and-set writes over, so a rival write cannot slip a 0 past it.
* When the last human leaves an open lobby it is cancelled.  Leaving a game in
  progress hands the seat to the AI for good.
* Every rule of a write (seated once, owner only, lobby full, open, seated at
  another table) is checked inside the plan that ``Tables.retry`` runs again
  after a lost compare-and-set, so it always holds on the state written over.
* Every write but create takes an optional ``request_id`` (the bot passes its
  callback query's id): the same id again is answered ``duplicate=True`` and
  changes nothing -- checked before the rules and again inside the
  compare-and-set, so one press delivered to two processes adds one AI seat.
* An open lobby untouched for ``lobby_ttl`` expires; so does a game with no
  write for ``game_ttl`` and a finished table after ``finished_ttl``.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from engine import find_variant
from engine.ai import KINDS as AI_KINDS
from engine.errors import OptionsError
from tables.fairplay import eligible, owed_leaves
from tables.games import Games
from tables.model import (
    CANCELLED,
    DEFAULT_AI,
    OPEN,
    OVER,
    PLAYING,
    TIMER_CHOICES,
    LiveError,
    Seat,
    ServiceUnavailable,
    Table,
    WriteResult,
    rated_timer,
    require_owner,
)
from tables.tables import Loaded, Plan, Tables

log = logging.getLogger(__name__)


def new_code() -> str:
    """A short invite code / table id: 11 URL-safe characters, 64 random bits."""
    return secrets.token_urlsafe(8)


def _validate(
    variant: str, options: Mapping[str, Any] | None, max_seats: int | None, timer: int, rated: bool
) -> tuple[str, dict[str, Any], int, int]:
    try:
        v = find_variant(variant)
        opts = v.options(options).to_json()
        mx = v.max_players if max_seats is None else max_seats
        v.check_players(mx)
    except OptionsError as e:
        raise LiveError("bad_settings", e.message, reason=e.code) from None
    if timer not in TIMER_CHOICES:
        raise LiveError("bad_settings", f"turn timer must be one of {TIMER_CHOICES} seconds")
    # a rated game always has a turn timer, or its loser could stall it for ever (#38)
    return v.name, opts, mx, rated_timer(rated, timer)


class Lobbies:
    """The lobbies part: create, join, leave, AI seats, settings, cancel."""

    def __init__(self, tables: Tables, games: Games) -> None:
        self.tables = tables
        self.games = games

    async def create_lobby(
        self,
        creator: int,
        name: str,
        *,
        chat: int | None = None,
        thread: int | None = None,
        variant: str = "chuvash",
        options: Mapping[str, Any] | None = None,
        max_seats: int | None = None,
        timer: int = 60,
        private: bool = False,
        ai_kind: str = DEFAULT_AI,
        table_id: str | None = None,
        arena: str = "",
        rated: bool = True,
    ) -> WriteResult:
        """A new open lobby with ``creator`` in seat 0 (``chat`` None: a private
        lobby joined by invite link; ``thread``: where in ``chat`` it lives, kept
        as given, :attr:`Table.thread`); ``ai_kind``: the level of the AI seats it adds.
        An arena's table (#27) comes with the id its pairing chose and the
        arena's id.  ``rated``: rated games (#25); casual lobbies alone may
        have no turn timer (#38)."""
        vname, opts, mx, timer = _validate(variant, options, max_seats, timer, rated=rated)
        _check_kind(ai_kind)
        tid = table_id or new_code()
        label = await self._label(creator, vname)  # before the claim (see join)
        now = self.tables.now_ms()
        fresh = (await self.tables.ratings.eligibility([creator], now)).fresh  # #38
        await self.tables.claim_user(creator, tid)
        t = Table(
            id=tid,
            chat=chat,
            thread=thread if chat is not None else None,
            creator=creator,
            variant=vname,
            options=opts,
            max_seats=mx,
            timer=timer,
            seats=(Seat(creator, name, rating=label),),
            private=private or chat is None,
            created=now,
            updated=now,
            ai_kind=ai_kind,
            arena=arena,
            rated=rated,
            fresh=fresh,
        )
        try:
            result = await self.tables.write(
                None, Plan(t, None, events=[("create", 0, str(creator))])
            )
        except BaseException:
            await self.tables.release_user(creator, tid)
            raise
        await self.tables.settle_users(tid, creator)
        return result

    async def lobby(self, code: str) -> Table:
        """The table with this invite code (= table id)."""
        return (await self.tables.load(code)).table

    async def join(self, table_id: str, user: int, name: str, request_id: str = "") -> WriteResult:
        """Seat ``user`` in the open lobby (see the module rules).  Every rule is
        checked in the plan, so a lost race (a double tap, a rival for the last
        seat) re-checks it on the newer table."""
        claimed = False

        async def make(loaded: Loaded) -> Plan | None:
            nonlocal claimed
            t = loaded.table
            if t.seat_of(user) is not None and t.status in (OPEN, PLAYING):
                return None  # already seated: a second tap changes nothing
            _check_open(t)
            _check_room(t)
            if t.rated:  # #25, #38: the one check, inside this join's CAS plan
                await self.tables.fairplay.check([user])
            # read before the claim: a claim not yet written makes a rival join of
            # the same user wait ("busy"), so nothing between the two may be slow
            label = await self._label(user, t.variant)
            seat = Seat(user, name, rating=label)
            t = replace(t, seats=(*t.seats, seat), updated=self.tables.now_ms())
            t = await eligible(self.tables.ratings, t, t.updated)  # #38: the lobby tells
            claimed = await self.tables.claim_user(user, table_id) or claimed
            return Plan(t, None, events=[("join", len(t.seats) - 1, str(user))])

        try:
            result = await self.tables.retry(table_id, make, request_id)
        except BaseException:
            if claimed and await self.tables.where(user) is None:
                await self.tables.release_user(user, table_id)
            else:
                await self.tables.settle_users(table_id, user)
            raise
        await self.tables.settle_users(table_id, user)
        return result

    async def leave(
        self, table_id: str, user: int, request_id: str = "", *, lobby: bool = False
    ) -> WriteResult:
        """Leave an open lobby (the seat goes; the last human out cancels it) or a
        game in progress (the AI takes the seat for good) -- unless his seat is
        out of the game already: then he only goes (free to sit elsewhere), his
        place stands and nothing is charged.  ``lobby``: the lobby message's
        *Leave*, which leaves an open lobby only (``not_open`` once its game
        started: a stale button never walks him out of a game)."""

        async def make(loaded: Loaded) -> Plan:
            t = loaded.table
            seat = t.seat_of(user)
            if seat is None:
                raise LiveError("not_seated", "you do not sit at this table")
            if lobby:
                _check_open(t)  # inside the leave's CAS: a Start just before wins
            if t.status == PLAYING and loaded.state is not None and seat in loaded.state.out:
                # done playing (RULES: out once his hand is empty and the stock
                # too): no AI to take over, no walk-away, no offence
                t = t.with_seat(seat, replace(t.seats[seat], left=True))
                return Plan(t, loaded.state, events=[("left", seat, "out")], notify="left")
            if t.status == PLAYING:
                plan = await self.games.takeover_plan(loaded, seat, "left", left=True)
                plan.notify = "left"
                return plan
            if t.status != OPEN:
                raise LiveError("not_open", "this table is no longer open")
            seats = t.seats[:seat] + t.seats[seat + 1 :]
            humans = [s.user for s in seats if s.user is not None]
            creator = t.creator if t.creator != user or not humans else humans[0]
            status = OPEN if humans else CANCELLED
            t = replace(
                t, seats=seats, creator=creator or user, status=status, updated=self.tables.now_ms()
            )
            events = [("leave", seat, str(user))]
            if status == CANCELLED:
                events.append(("cancel", -1, "empty"))
            return Plan(t, None, events=events)

        result = await self.tables.retry(table_id, make, request_id)
        if result.table.status == PLAYING:
            # a rated game's leave is an offence now, not at the game's end
            # (#38): he is free to sit elsewhere at once.  A retried leave
            # (the same request id) charges it if the first could not --
            # once.  A fault leaves it to the table's timer (its hint was set
            # in the leave's write) and to the checks before a rated game,
            # which find the table through his pointer: kept until then.
            loaded = await self.tables.load(table_id) if result.duplicate else None
            charged = "" if loaded is None else loaded.charged
            if user in owed_leaves(result.table, charged):
                try:
                    await self.tables.fairplay.charge_leave(result.table, user)
                except ServiceUnavailable as e:
                    log.warning("table %s: %s's leave not charged yet: %s", table_id, user, e)
                    return result
        await self.tables.release_user(user, table_id)
        return result

    async def add_ai(
        self,
        table_id: str,
        user: int,
        kind: str | None = None,
        name: str = "",
        request_id: str = "",
    ) -> WriteResult:
        """Add an AI seat (``kind`` of ``engine.ai.KINDS``; None: the lobby's AI
        level, :attr:`Table.ai_kind`)."""
        if kind is not None:
            _check_kind(kind)

        def make(loaded: Loaded) -> Plan:
            t = _owner_open(loaded.table, user, "add_ai")
            _check_room(t)
            n = sum(1 for s in t.seats if s.user is None) + 1
            seat = Seat(None, name or f"AI {n}", kind or t.ai_kind)
            t = replace(t, seats=(*t.seats, seat), updated=self.tables.now_ms())
            return Plan(t, None, events=[("add_ai", len(t.seats) - 1, seat.ai or "")])

        return await self.tables.retry(table_id, make, request_id)

    async def remove_ai(
        self, table_id: str, user: int, seat: int | None = None, request_id: str = ""
    ) -> WriteResult:
        """Remove the AI seat ``seat`` (None: the last AI seat)."""

        def make(loaded: Loaded) -> Plan:
            t = _owner_open(loaded.table, user, "remove_ai")
            at = seat
            if at is None:
                ai = [i for i, s in enumerate(t.seats) if s.user is None]
                if not ai:
                    raise LiveError("bad_seat", "there is no AI seat")
                at = ai[-1]
            if not 0 <= at < len(t.seats) or t.seats[at].user is not None:
                raise LiveError("bad_seat", f"seat {at} is not an AI seat")
            t = replace(t, seats=t.seats[:at] + t.seats[at + 1 :], updated=self.tables.now_ms())
            return Plan(t, None, events=[("remove_ai", at, "")])

        return await self.tables.retry(table_id, make, request_id)

    async def configure(
        self,
        table_id: str,
        user: int,
        *,
        variant: str | None = None,
        options: Mapping[str, Any] | None = None,
        max_seats: int | None = None,
        timer: int | None = None,
        spectators: bool | None = None,
        ai_kind: str | None = None,
        rated: bool | None = None,
        request_id: str = "",
    ) -> WriteResult:
        """Change settings of an open lobby (validated; a new variant without
        ``options`` gets its defaults; max seats clipped to the variant's range;
        ``spectators``: may people not seated watch the game, issue #16).
        ``ai_kind``: the lobby's AI level -- its AI seats play it from now on, and
        the seats added later; ``rated``: rated or casual games (#25)."""
        if ai_kind is not None:
            _check_kind(ai_kind)

        async def make(loaded: Loaded) -> Plan:
            t = _owner_open(loaded.table, user, "settings")
            vname = variant or t.variant
            opts = options if options is not None else (t.options if vname == t.variant else None)
            mx = max_seats if max_seats is not None else t.max_seats
            if max_seats is None and vname != t.variant:
                mx = (
                    min(mx, find_variant(vname).max_players)
                    if vname in ("chuvash", "shchelkovsky")
                    else mx
                )
            ranked = t.rated if rated is None else rated
            tm = t.timer if timer is None else timer
            vname, opts2, mx, tm = _validate(vname, opts, mx, tm, rated=ranked)
            if mx < len(t.seats):
                raise LiveError(
                    "bad_settings", f"{len(t.seats)} seats are taken: max seats cannot be {mx}"
                )
            level = ai_kind or t.ai_kind
            seats = t.seats
            if ai_kind is not None:  # a new level: every AI seat plays it
                seats = tuple(replace(s, ai=level) if s.user is None else s for s in seats)
            if vname != t.variant:  # each one's rating in the new game
                humans = [s.user for s in seats if s.user is not None]
                labels = await self.tables.ratings.labels(humans, vname)
                seats = tuple(
                    replace(s, rating=labels[s.user]) if s.user is not None else s for s in seats
                )
            t = replace(
                t,
                variant=vname,
                options=opts2,
                max_seats=mx,
                timer=tm,
                spectators=t.spectators if spectators is None else spectators,
                rated=ranked,
                seats=seats,
                ai_kind=level,
                updated=self.tables.now_ms(),
            )
            t = await eligible(self.tables.ratings, t, t.updated)  # #38
            return Plan(t, None, events=[("settings", -1, f"{vname}:{mx}:{tm}:{level}")])

        return await self.tables.retry(table_id, make, request_id)

    async def _label(self, user: int, variant: str) -> str:
        return (await self.tables.ratings.labels([user], variant))[user]

    async def cancel(self, table_id: str, user: int, request_id: str = "") -> WriteResult:
        """The creator closes an open lobby."""

        def make(loaded: Loaded) -> Plan:
            t = _owner_open(loaded.table, user, "cancel")
            t = replace(t, status=CANCELLED, updated=self.tables.now_ms())
            return Plan(t, None, events=[("cancel", -1, str(user))])

        result = await self.tables.retry(table_id, make, request_id)
        for u in result.table.humans():
            await self.tables.release_user(u, table_id)
        return result


def _check_kind(kind: str) -> None:
    if kind not in AI_KINDS:
        raise LiveError("bad_settings", f"unknown AI kind {kind!r}; known: {', '.join(AI_KINDS)}")


def _check_open(t: Table) -> None:
    if t.status != OPEN:
        what = {
            PLAYING: "the game has started",
            OVER: "the game is over",
            CANCELLED: "it was cancelled",
        }
        raise LiveError("not_open", f"the lobby is closed: {what.get(t.status, t.status)}")


def _check_room(t: Table) -> None:
    if len(t.seats) >= t.max_seats:
        raise LiveError("lobby_full", f"the lobby is full ({t.max_seats} seats)")


def _owner_open(t: Table, user: int, action: str) -> Table:
    _check_open(t)
    require_owner(t, user, action)
    return t
