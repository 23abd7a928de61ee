"""Fixtures for the table service: a service per test on the session's Redis,
under the test's own key prefix, with an injected clock."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
import redis.asyncio as aredis

from engine import Action, GameState, new_game, state_to_json
from tables import MOVE_KINDS, LiveConfig, TableService
from tables.client import Client, is_cluster_url, make_client
from tests.tables._wire import Wire, wired_client


class FakeClock:
    """A clock the test moves by hand (seconds since the epoch)."""

    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def config(redis_prefix: str) -> LiveConfig:
    """The service's settings; every account counts as established and no
    opponent-diversity guard (#38: each is tested on its own, ``fresh_accounts``
    and ``test_ratings_diversity.py``)."""
    return LiveConfig(
        prefix=redis_prefix,
        rated_after_games=0,
        rated_after_days=0,
        rated_diversity_opponents=0,
    )


@pytest.fixture(params=["single", "cluster"])
def live_url(request: pytest.FixtureRequest) -> str:
    """The Redis of the service fixtures: the session's server (``single``) and
    a 3-master Redis Cluster (``cluster``, a ``redis+cluster://`` URL)."""
    name = "redis_url" if request.param == "single" else "redis_cluster_url"
    return str(request.getfixturevalue(name))


@pytest.fixture
async def make_service(
    live_url: str, config: LiveConfig, clock: FakeClock
) -> AsyncIterator[Callable[..., TableService]]:
    """Build services (each with its own client) sharing the test's prefix,
    on one server and on a cluster (:func:`live_url`); ``wire=`` counts what
    the service's client sends (:mod:`tests.tables._wire`)."""
    made: list[TableService] = []

    def make(wire: Wire | None = None, **overrides: Any) -> TableService:
        cfg = LiveConfig(**{**config.__dict__, **overrides}) if overrides else config
        client: Client
        if wire is not None:
            client = wired_client(live_url, wire)
        elif is_cluster_url(live_url):
            client = make_client(live_url, cfg)
        else:
            client = aredis.Redis.from_url(live_url)
        svc = TableService(client, cfg, clock=clock, owns_client=True)
        made.append(svc)
        return svc

    yield make
    for svc in made:
        await svc.aclose()


@pytest.fixture
async def svc(make_service: Callable[..., TableService]) -> TableService:
    return make_service()


async def replay_current_game(
    svc: TableService, table_id: str, previous_loser: int | None = None
) -> GameState:
    """The pure engine replaying every move of the table's current game in its log."""
    table, _, _ = await svc.tables.get(table_id)
    events = []
    after = 0
    while True:
        page = await svc.admin.event_page(table_id, after, 500)
        if not page:
            break
        events += page
        after = page[-1].version
    starts = [i for i, e in enumerate(events) if e.kind == "start"]
    moves = events[starts[-1] + 1 :]
    state = new_game(table.variant, len(table.seats), table.seed, table.options, previous_loser)
    for e in moves:
        if e.kind in MOVE_KINDS:
            state.apply(Action.from_text(e.seat, e.text))
    return state


def same_state(a: GameState, b: GameState) -> bool:
    return state_to_json(a, history=False) == state_to_json(b, history=False)


async def human_move(svc: TableService, table_id: str, rng: Any) -> bool:
    """One random legal move by a human seat the game waits for; False when over."""
    table, state, version = await svc.tables.get(table_id)
    assert state is not None
    if state.over:
        return False
    seats = [s for s in state.to_act() if not table.seats[s].ai_controlled]
    assert seats, "the game waits only for humans after every write"
    seat = rng.choice(seats)
    action = rng.choice(state.legal_actions(seat))
    user = table.seats[seat].user
    assert user is not None
    await svc.games.apply(table_id, user, action.text(), version)
    return True


async def play_out(svc: TableService, table_id: str, rng: Any, limit: int = 5000) -> None:
    for _ in range(limit):
        if not await human_move(svc, table_id, rng):
            return
    raise AssertionError("game did not end")


async def new_table(
    svc: TableService,
    humans: int = 2,
    ais: int = 0,
    *,
    variant: str = "chuvash",
    timer: int = 0,
    chat: int | None = -100,
    first_user: int = 1,
    options: dict[str, Any] | None = None,
    start: bool = True,
    rated: bool = True,
) -> str:
    """A lobby of ``humans`` and ``ais``, its game started unless ``start`` is
    False.  A rated lobby asked for no ``timer`` gets the rated one (#38): a
    game without a timer is a casual one (``rated=False``)."""
    r = await svc.lobbies.create_lobby(
        first_user, f"U{first_user}", chat=chat, variant=variant, timer=timer, options=options
    )
    tid = r.table_id
    if not rated:
        await svc.lobbies.configure(tid, first_user, rated=False, timer=timer)
    for u in range(first_user + 1, first_user + humans):
        await svc.lobbies.join(tid, u, f"U{u}")
    for _ in range(ais):
        await svc.lobbies.add_ai(tid, first_user)
    if start:
        await svc.games.start(tid, first_user)
    return tid
