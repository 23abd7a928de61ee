"""The group's flood budget, end to end: whole group games of both variants with
the fake Bot API's flood limits ON (Telegram's: about 20 messages a minute in a
group, edits included) and the product's delivery delays, while a member who
does not play keeps writing to the busy group -- /top, /help, and a lobby of
his own that starts a second game (a new table message).  The fake answers no
429, and every command gets its reply (never the apology)."""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest

from sandbox.fake_api import Chat, FakeTelegram, RateLimits, SimUser
from telegram_bot.views import texts
from tests.bot.e2e_group_kit import group_lobby
from tests.bot.e2e_kit import SAFETY, TELEGRAM_SCALE, is_over, play_out, running

# the product's delays (the kit's defaults are faster)
PRODUCT_DELAYS = {"soon_delay": 1.0, "later_delay": 2.0, "table_delay": 4.0}


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    """Telegram's limits, its time :data:`TELEGRAM_SCALE` times as fast (#37)."""
    async with FakeTelegram(limits=RateLimits(), time_scale=TELEGRAM_SCALE) as server:
        yield server


@dataclass
class Heckler:
    """A member of the group who does not play: he writes to it while it is busy."""

    user: SimUser
    group: Chat
    replies: list[str] = field(default_factory=list)

    async def ask(self, command: str, expect: str) -> None:
        self.user.send(command, self.group)
        t0 = time.monotonic()
        await self.user.wait_message(expect, self.group, timeout=SAFETY)
        print(f"{command} answered in {time.monotonic() - t0:.1f} s")  # a figure, not a check
        self.replies.append(command)

    async def open_a_second_game(self) -> None:
        """/new in the busy group, Add AI, Start: a lobby and a new table message."""
        self.user.send("/new chuvash", self.group)
        lobby = await self.user.wait_message("Invitation link", self.group, timeout=SAFETY)
        self.replies.append("/new")
        await self.user.press("Add AI", message=lobby, chat=self.group).wait_answer(SAFETY)
        await self.user.press("Start", message=lobby, chat=self.group).wait_answer(SAFETY)
        await self.user.wait_message("Players", self.group, timeout=SAFETY)
        self.replies.append("start")

    async def run(self, rounds: int, pause: float) -> None:
        for i in range(rounds):
            await asyncio.sleep(pause)  # pacing only: nothing is timed
            await self.ask("/top", "Leaderboard")
            await self.ask("/help", "opens a lobby")
            if i == 1:
                await self.open_a_second_game()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("variant", "n_humans", "n_ai", "seed"),
    [("chuvash", 3, 1, 11), ("shchelkovsky", 2, 2, 12)],
)
async def test_a_busy_group_gets_no_429_and_every_reply(
    fake: FakeTelegram,
    redis_url: str,
    redis_prefix: str,
    variant: str,
    n_humans: int,
    n_ai: int,
    seed: int,
) -> None:
    print(f"seed {seed}")
    async with running(
        redis_url, redis_prefix, fake, telegram_time_scale=TELEGRAM_SCALE, **PRODUCT_DELAYS
    ) as h:
        humans = [fake.add_user(f"P{i}", language_code="en") for i in range(n_humans)]
        kibitzer = fake.add_user("Kibitzer", language_code="en")
        kibitzer.start()
        await kibitzer.wait_message(timeout=SAFETY)
        tid, group = await group_lobby(h, variant, humans, n_ai, watchers=[kibitzer])
        heckler = Heckler(kibitzer, group)
        rounds = 6
        # real seconds: pacing that keeps him writing while the games go on
        heckling = asyncio.create_task(heckler.run(rounds, pause=1.0))
        try:
            await play_out(h, tid, humans, rng=random.Random(seed))
            await asyncio.wait_for(asyncio.shield(heckling), SAFETY * 3)
        finally:
            if not heckling.done():
                heckling.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await heckling
        for u in humans:
            assert is_over(await h.hand_message(u, tid))
        assert h.bot is not None
        await h.bot.app.delivery.flush()
        print("fake:", fake.stats.to_json())
        print("delivery:", h.bot.app.delivery.stats.as_dict())
    assert len(heckler.replies) == 2 * rounds + 2, heckler.replies
    sorry = texts.SORRY.split(",")[0]
    assert not [m for m in fake.messages(group) if sorry in (m.text or "")]
    assert fake.stats.retry_after == 0, fake.stats.refusals
    assert not fake.stats.errors, fake.stats.error_texts


class LaterClock:
    """Real time, moved on by ``later`` seconds when told (the fake's minute
    passes without the test waiting it out)."""

    def __init__(self) -> None:
        self.later = 0.0

    def __call__(self) -> float:
        return time.monotonic() + self.later


@pytest.fixture
def later_clock() -> LaterClock:
    return LaterClock()


@pytest.fixture
async def spent_fake(later_clock: LaterClock) -> AsyncIterator[FakeTelegram]:
    """Telegram's limits, but a chat's burst of 30: another client of the token
    can spend the group's minute at once."""
    async with FakeTelegram(limits=RateLimits(per_chat_burst=30), clock=later_clock) as server:
        yield server


async def test_commands_in_a_group_whose_minute_is_spent_wait_their_turn(
    spent_fake: FakeTelegram, later_clock: LaterClock, redis_url: str, redis_prefix: str
) -> None:
    """The group's minute was spent by writes our budget never saw: the first
    reply gets a 429 and holds the group; /top and /help each wait their turn and
    get their reply -- no apology, no more 429s."""
    fake = spent_fake
    async with running(redis_url, redis_prefix, fake):
        owner = fake.add_user("Owner", language_code="en")
        group = owner.create_group("Busy")
        owner.add_bot_to(group)
        await owner.wait_message("/new", group, timeout=SAFETY)  # the how-to
        other = fake.make_bot()
        try:
            for i in range(19):  # with the how-to: the group's 20 of this minute
                await other.send_message(group.id, f"elsewhere {i}")
        finally:
            await other.session.close()
        assert fake.stats.retry_after == 0, fake.stats.refusals
        # 55 s of the group's minute pass (Telegram counts windows, #28: the
        # minute is free again only when its first messages leave it)
        later_clock.later = 55.0
        for command in ("/top", "/help"):
            owner.send(command, group)
        for expect in ("Leaderboard", "opens a lobby"):

            def replied(e: str = expect) -> bool | None:
                return any(e in (m.text or "") for m in fake.messages(group)) or None

            await fake.world.wait_for(replied, SAFETY)
    sorry = texts.SORRY.split(",")[0]
    assert not [m for m in fake.messages(group) if sorry in (m.text or "")]
    assert fake.stats.retry_after == 1
