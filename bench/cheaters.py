"""A cheater's benchmark (#38): scripted attempts to farm the rating or dodge
its penalties, against the table service on a throw-away redis-server, with an
injected clock so that one simulated hour takes seconds.

Each scheme runs on its own key prefix (fresh accounts) for one simulated
hour; players move every ``--move-seconds`` of the service clock.  Printed per
scheme: the games played and counted, and what the cheater's *main* account
gained per simulated hour in ``mu`` (the openskill mean; the rating shown is
``1000 + 30 * (mu - 3 sigma)``), next to the goal: 0 -- a scheme that pays
nothing.  The schemes:

* ``leave-rematch`` -- a second account leaves game 1 (a real walkaway, it
  counts), then the main account presses *Rematch* again and again: the AI
  plays the second account's seat from the first move.  Gain: the rematches'.
* ``stall`` -- a rated lobby without a turn timer; the cheater stops moving at
  once, his honest opponent waits 10 minutes, then leaves (his offence): the
  cheater ranks first.
* ``cooldown-dodge`` -- a serial leaver leaves every other game at once and sits
  down at the next rated table at once, while the AI still plays out the game
  he left (its offence, and the cooldown it sets, come at its end).  Gain: his
  mu from the games that started inside the cooldown his leave had earned
  (``RatingRules.cooldown``), plus their count.
* ``pair-cap`` -- the main account (a real one: the day before, he played
  three other people) farms two second accounts in turn, each losing every
  game on purpose, 7 games each (the pair cap, ``RatingRules.pair_daily``, is
  5 a day).  The second accounts play no one else, so the opponent-diversity
  guard (#38: a pair counts only if each of the two played at least
  ``RATED_DIVERSITY_OPPONENTS`` other people in ``RATED_DIVERSITY_DAYS``)
  never lets their result against main count.  Then 3-player tables of main,
  a second account and an honest player who has a history of his own (three
  other people the day before): the honest player's games must still count
  (printed: his voided games, goal 0), and main's gain there is what the
  second account added to his result -- his own result against the honest
  player is honest play, printed apart and not counted as a gain.  This is
  the one scheme run with the diversity guard on (the service's default);
  the others run without it, so that each measures the guard it attacks.
* ``draw-farm`` -- the main account and a second account play every game to a
  draw (a deal and a line of play known to draw).
* ``fresh-accounts`` -- a new second account for every game, walking away at
  once (no pair cap, no cooldown reaches it); the main account an old one.
  This scheme runs with the service's rule of new accounts
  (``RATED_AFTER_GAMES``/``DAYS``); the others with every account counted as
  established, so that each measures the guard it attacks.

``python bench/cheaters.py [--move-seconds 3] [--hours 1]``; fast (well under
a minute) so that ``bash .ci/dev bench`` runs it."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis.asyncio as aredis

from engine import Action, GameState
from engine.ai import make_player
from engine.errors import EngineError
from sandbox.local_redis import find_redis_server, start_redis, stop
from tables import PLAYING, GameResult, LiveConfig, LiveError, TableService
from tables.games import timeout_move
from tables.ratings import RatingRules, moves

VARIANT = "chuvash"
DRAW_SEED, DRAW_POLICY = 18, 1
"""A 2-player Chuvash deal and a line of play that draw (tests/tables/test_ratings.py)."""


class SimClock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


Policy = Callable[[GameState, int], Action]


def random_policy(rng: random.Random) -> Policy:
    return lambda state, seat: rng.choice(state.legal_actions(seat))


def strong_policy(seed: int) -> Policy:
    """The heuristic AI's move: a better player than the random ones."""
    player = make_player("heuristic", seed)

    def choose(state: GameState, seat: int) -> Action:
        action = player.choose(state, seat)
        assert action is not None
        return action

    return choose


def worst_policy(state: GameState, seat: int) -> Action:
    """Losing on purpose: take every attack, pass every throw-in, lead the lowest card."""
    return timeout_move(state, seat)


def draw_policy(state: GameState, seat: int) -> Action:
    return random.Random(f"{DRAW_POLICY}:{state.ply}").choice(state.legal_actions(seat))


@dataclass
class SchemeOutcome:
    name: str
    games: int = 0
    counted: int = 0
    gain: float = 0.0  # mu of the main account
    hours: float = 1.0
    notes: list[str] = field(default_factory=list)
    missed: bool = False  # a goal of its own missed (besides the gain)


class Bench:
    def __init__(
        self,
        url: str,
        move_seconds: float,
        hours: float,
        *,
        established: bool = True,
        diverse: bool = False,
    ) -> None:
        """``established``: every account counts as established (#38: the
        guard each scheme attacks is measured on its own); else the service's
        own rule of new accounts applies (``fresh-accounts``).  ``diverse``:
        the opponent-diversity guard as the service's default has it (#38;
        ``pair-cap``); else none."""
        self.url = url
        self.move = move_seconds
        self.hours = hours
        self.clock = SimClock()
        prefix = f"cheat:{uuid.uuid4().hex[:8]}:"
        rules: dict[str, Any] = {}
        if established:
            rules |= {"rated_after_games": 0, "rated_after_days": 0}
        if not diverse:
            rules["rated_diversity_opponents"] = 0
        config = LiveConfig(prefix=prefix, **rules)
        self.svc = TableService(
            aredis.Redis.from_url(url), config, clock=self.clock, owns_client=True
        )
        self.end = self.clock() + 3600 * hours

    async def aclose(self) -> None:
        await self.svc.aclose()

    @property
    def over(self) -> bool:
        return self.clock() >= self.end

    async def mu(self, user: int) -> float:
        return (await self.svc.ratings.many([user], VARIANT))[user].mu

    async def table(self, users: list[int], *, timer: int = 30, seed: int | None = None) -> str:
        """A rated lobby of ``users`` (the first creates it), started."""
        svc = self.svc
        r = await svc.lobbies.create_lobby(
            users[0], f"U{users[0]}", chat=-100, variant=VARIANT, timer=timer
        )
        try:
            for u in users[1:]:
                await svc.lobbies.join(r.table_id, u, f"U{u}")
            if seed is not None:
                svc.games.new_seed = lambda: seed
            await svc.games.start(r.table_id, users[0])
        except LiveError:  # a cooldown: the lobby goes
            await svc.lobbies.cancel(r.table_id, users[0])
            raise
        return r.table_id

    async def play(self, tid: str, policies: dict[int, Policy], *, stop_at: float = 0) -> bool:
        """The humans move by their policies until the game ends (True) or the
        clock reaches ``stop_at`` (False); the timers tick as time passes."""
        svc = self.svc
        while True:
            loaded = await svc.tables.load(tid)
            table, state, version = loaded.table, loaded.state, loaded.version
            if state is None or state.over or table.status != PLAYING:
                return True
            if stop_at and self.clock() >= stop_at:
                return False
            seats = [s for s in state.to_act() if not table.seats[s].ai_controlled]
            seat = min(seats)
            user = table.seats[seat].user
            assert user is not None
            policy = policies.get(user)
            if policy is None:  # he does not move: time passes, to his deadline if any
                due = loaded.deadline / 1000 if loaded.deadline else self.clock() + 60
                self.clock.now = min(max(due, self.clock() + self.move), stop_at or due)
                await svc.timers.tick()
                continue
            with contextlib.suppress(LiveError, EngineError):
                await svc.games.apply(tid, user, policy(state, seat).text(), version)
            self.clock.now += self.move

    async def counted(self, tid: str, game: int) -> bool:
        s = await self.svc.ratings.settlement(tid, game)
        return bool(s and s.counted)

    # ------------------------------------------------------------ schemes
    async def leave_rematch(self) -> SchemeOutcome:
        out = SchemeOutcome("leave-rematch")
        main, alt = 1, 2
        tid = await self.table([main, alt])
        await self.svc.lobbies.leave(tid, alt)
        await self.play(tid, {main: random_policy(random.Random(1))})
        out.games, out.counted = 1, int(await self.counted(tid, 1))
        start = await self.mu(main)
        game = 1
        while not self.over:
            try:
                await self.svc.games.rematch(tid, main)
            except LiveError as e:
                out.notes.append(f"rematch refused: {e.code}")
                break
            game += 1
            await self.play(tid, {main: random_policy(random.Random(game))})
            out.games += 1
            out.counted += int(await self.counted(tid, game))
        out.gain = await self.mu(main) - start
        return out

    async def stall(self) -> SchemeOutcome:
        out = SchemeOutcome("stall")
        cheat = 1
        victims = iter(range(100, 1000))
        start = await self.mu(cheat)
        while not self.over:
            victim = next(victims)  # a fresh honest opponent each game (his cooldowns)
            try:
                tid = await self.table([cheat, victim], timer=0)
            except LiveError as e:
                out.notes.append(f"refused: {e.code}")
                break
            done = await self.play(
                tid, {victim: random_policy(random.Random(victim))}, stop_at=self.clock() + 600
            )
            if not done:  # he waited 10 minutes: he goes, the cheater plays the AI out
                await self.svc.lobbies.leave(tid, victim)
                await self.play(tid, {cheat: random_policy(random.Random(victim))})
            out.games += 1
            out.counted += int(await self.counted(tid, 1))
        out.gain = await self.mu(cheat) - start
        return out

    async def cooldown_dodge(self) -> SchemeOutcome:
        out = SchemeOutcome("cooldown-dodge")
        leaver = 1
        rules = RatingRules()
        honest = iter(range(100, 1000))
        leaves: list[float] = []
        due_until = 0.0
        dodged = 0
        gain = 0.0
        n = 0
        later: tuple[str, dict[int, Policy]] | None = None
        while not self.over:
            n += 1
            victim = next(honest)
            try:
                tid = await self.table([leaver, victim])
            except LiveError as e:
                # a cooldown: he waits it out
                until = e.info.get("until")
                if e.code == "cooldown" and until:
                    self.clock.now = max(self.clock.now, until / 1000) + 1
                    continue
                raise
            started = self.clock()
            before = await self.mu(leaver)
            policies: dict[int, Policy] = {victim: random_policy(random.Random(n))}
            if n % 2:
                await self.svc.lobbies.leave(tid, leaver)
                recent = [t for t in leaves if t > started - rules.offence_window]
                leaves.append(started)
                due_until = max(due_until, started + rules.cooldown(len(recent) + 1))
                # the honest player plays it out against the AI, at a human pace,
                # while the leaver sits down elsewhere: that game goes on later
                later = (tid, policies)
            else:
                inside = started < due_until
                await self.play(tid, {**policies, leaver: strong_policy(n)})
                if later is not None:
                    await self.play(*later)
                    later = None
                delta = await self.mu(leaver) - before
                if inside:
                    dodged += 1
                    gain += delta
                out.counted += int(await self.counted(tid, 1))
            out.games += 1
        out.gain = gain
        out.notes.append(f"rated games started inside a due cooldown: {dodged} (goal 0)")
        out.missed = dodged > 0
        return out

    async def pair_cap(self) -> SchemeOutcome:
        out = SchemeOutcome("pair-cap")
        main, alts, honest = 1, [2, 3], 9
        await self.met(main, [20, 21, 22])  # his main account plays other people too
        start = await self.mu(main)
        n = 0
        # part 1: two second accounts in turn, each losing on purpose
        while not self.over and n < 14:
            alt = alts[n % 2]
            n += 1
            try:
                tid = await self.table([main, alt])
            except LiveError as e:
                out.notes.append(f"refused: {e.code}")
                break
            await self.play(tid, {main: random_policy(random.Random(n)), alt: worst_policy})
            out.games += 1
            out.counted += int(await self.counted(tid, 1))
        farmed = await self.mu(main) - start
        out.notes.append(
            f"part 1: {n} games against the second accounts, {out.counted} counted, "
            f"main {farmed:+.2f} mu"
        )
        # part 2: main and a second account at a table with an honest player,
        # who has a history of his own (#38: his pair with main counts)
        await self.met(honest, [30, 31, 32])
        voided = 0
        three = 0
        own = 0.0  # main's honest result against the honest player
        while not self.over and three < 4:
            three += 1
            try:
                tid = await self.table([main, alts[0], honest])
            except LiveError as e:
                out.notes.append(f"refused: {e.code}")
                break
            before = await self.svc.ratings.many([main, alts[0], honest], VARIANT)
            policies = {u: random_policy(random.Random(u * 7 + three)) for u in (main, honest)}
            await self.play(tid, {**policies, alts[0]: worst_policy})
            s = await self.svc.ratings.settlement(tid, 1)
            change = s.change_of(honest) if s is not None else None
            voided += int(s is None or not s.counted or change is None or not change.moved)
            out.games += 1
            out.counted += int(bool(s and s.counted))
            # what main would have had against the honest player alone: the
            # second account's pairs left out
            result = (await self.svc.tables.load(tid)).result
            assert result is not None
            alone = moves(result, before, [(main, alts[0]), (alts[0], honest)])
            fair = alone.get(main, before[main]).mu
            farmed += await self.mu(main) - fair
            own += fair - before[main].mu
        out.gain = farmed
        out.notes.append(
            f"part 2: the honest third player's games voided: {voided} of {three} (goal 0); "
            f"main's own result against him {own:+.2f} mu (honest play, not a gain)"
        )
        out.missed = voided > 0
        return out

    async def draw_farm(self) -> SchemeOutcome:
        out = SchemeOutcome("draw-farm")
        main, alt = 1, 2
        start = await self.mu(main)
        while not self.over:
            tid = await self.table([main, alt], seed=DRAW_SEED)
            await self.play(tid, {main: draw_policy, alt: draw_policy})
            out.games += 1
            out.counted += int(await self.counted(tid, 1))
            if out.games >= 12:
                break
        out.gain = await self.mu(main) - start
        return out

    async def met(self, user: int, others: list[int]) -> None:
        """``user`` finished a casual game with each of ``others`` the day
        before (#38: the people the opponent-diversity guard counts)."""
        at = int((self.clock() - 86_400) * 1000)
        for o in others:
            await self.svc.ratings.settle(
                GameResult(
                    table=f"met{user}x{o}", game=1, variant=VARIANT, chat=None, places=(1, 2),
                    loser=1, draw=False, seats=((user, f"U{user}"), (o, f"U{o}")), at=at,
                )
            )  # fmt: skip

    async def establish(self, user: int) -> None:
        """``user`` an established account (#38): his first games with other
        people, casual ones, days ago."""
        days = self.svc.config.rated_after_days + 1
        at = int((self.clock() - days * 86_400) * 1000)
        for g in range(self.svc.config.rated_after_games):
            await self.svc.ratings.settle(
                GameResult(
                    table=f"past{user}", game=g, variant=VARIANT, chat=None, places=(1, 2),
                    loser=1, draw=False, seats=((user, f"U{user}"), (90_000 + g, "old")), at=at,
                )
            )  # fmt: skip

    async def fresh_accounts(self) -> SchemeOutcome:
        out = SchemeOutcome("fresh-accounts")
        main = 1
        fresh = iter(range(1000, 10_000))
        await self.establish(main)  # the cheater's own account is an old one
        start = await self.mu(main)
        while not self.over:
            alt = next(fresh)
            tid = await self.table([main, alt])
            await self.svc.lobbies.leave(tid, alt)
            await self.play(tid, {main: random_policy(random.Random(alt))})
            out.games += 1
            out.counted += int(await self.counted(tid, 1))
        out.gain = await self.mu(main) - start
        return out


SCHEMES = ("leave_rematch", "stall", "cooldown_dodge", "pair_cap", "draw_farm", "fresh_accounts")


async def drive(url: str, move_seconds: float, hours: float) -> None:
    print(
        f"cheater's benchmark (#38): each scheme for {hours:g} simulated hour(s), "
        f"a move every {move_seconds:g} s; gain = the main account's mu per simulated hour "
        f"(openskill mean, start 25.0; shown rating = 1000 + 30 * (mu - 3 sigma))"
    )
    print(f"{'scheme':<16} {'games':>5} {'counted':>7} {'mu/hour':>8}  goal  wall")
    for name in SCHEMES:
        bench = Bench(
            url,
            move_seconds,
            hours,
            established=name != "fresh_accounts",
            diverse=name == "pair_cap",
        )
        began = time.perf_counter()
        try:
            out: SchemeOutcome = await getattr(bench, name)()
        finally:
            await bench.aclose()
        rate = out.gain / hours
        verdict = "0 ok" if rate <= 0.005 and not out.missed else "0 MISSED"
        print(
            f"{out.name:<16} {out.games:>5} {out.counted:>7} {rate:>8.2f}  {verdict:<8} "
            f"{time.perf_counter() - began:4.1f}s"
        )
        for note in out.notes:
            print(f"{'':<18}{note}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--move-seconds", type=float, default=3.0)
    parser.add_argument("--hours", type=float, default=1.0)
    args = parser.parse_args()
    binary = find_redis_server()
    if binary is None:
        sys.exit("no redis-server found")
    with tempfile.TemporaryDirectory(prefix="bench-cheaters-") as tmp:
        proc, url = start_redis(binary, Path(tmp))
        try:
            asyncio.run(drive(url, args.move_seconds, args.hours))
        finally:
            stop(proc)


if __name__ == "__main__":
    main()
