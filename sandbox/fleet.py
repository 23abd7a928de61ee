"""Several real bot processes behind one webhook (issue #12), for the
multi-process end-to-end tests and ``bench/scale.py``:

* :class:`BotFleet` starts ``count`` ``python -m telegram_bot`` subprocesses in
  webhook mode (``TELEGRAM_API_URL``: a :class:`~sandbox.fake_api.FakeTelegram`;
  one ``REDIS_URL``, ``redis+cluster://`` for a cluster) behind a
  :class:`~sandbox.webhook_proxy.WebhookProxy` -- every process registers the
  proxy's URL with ``setWebhook`` -- and stops them with SIGINT (as Ctrl-C);
* :func:`open_group_game` starts a group game the way people do: the bot
  added to a new group, /start in each private chat, /new, Join, Start.

The fleet holds a table service and chat-state store of its own on the same
Redis, so the caller can look at the tables (the processes are out of reach).
"""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from sandbox.fake_api import Chat, FakeTelegram, SimUser
from sandbox.local_redis import free_loopback_port
from sandbox.webhook_proxy import WebhookProxy
from tables import LiveConfig, TableService
from telegram_bot.state.chat_state import ChatStateStore

PATH = "/telegram"
START_TIMEOUT = 60.0
STOP_TIMEOUT = 30.0


class BotFleet:
    """``async with BotFleet(fake, redis_url, prefix, count=2) as fleet:`` --
    ``count`` bot processes behind ``fleet.proxy`` (``mode``: see
    :mod:`sandbox.webhook_proxy`); ``env`` adds settings (environment variables)
    for every process."""

    def __init__(
        self,
        fake: FakeTelegram,
        redis_url: str,
        prefix: str,
        *,
        count: int = 2,
        mode: str = "round_robin",
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.fake = fake
        self.redis_url = redis_url
        self.prefix = prefix
        self.count = count
        self.env = {"DEFAULT_TIMER": "0", "SET_COMMANDS": "false", **(env or {})}
        self.secret = secrets.token_urlsafe(24)
        self.ports = [free_loopback_port() for _ in range(count)]
        targets = [f"http://127.0.0.1:{p}{PATH}" for p in self.ports]
        self.proxy = WebhookProxy(targets, mode=mode)
        self.procs: list[asyncio.subprocess.Process] = []
        self._codes: list[int | None] | None = None
        self._tmp = tempfile.TemporaryDirectory(prefix="durak-fleet-")
        self.logs = [Path(self._tmp.name) / f"bot{i}.log" for i in range(count)]
        self.svc = TableService.from_url(redis_url, LiveConfig(prefix=prefix))
        self.ui = ChatStateStore.of(self.svc)

    def log_tail(self, chars: int = 3000) -> str:
        return "\n".join(f"--- bot {i}\n{p.read_text()[-chars:]}" for i, p in enumerate(self.logs))

    async def start(self) -> None:
        await self.proxy.start()
        for port, log in zip(self.ports, self.logs, strict=True):
            env = {
                **os.environ,
                "BOT_TOKEN": self.fake.token,
                "REDIS_URL": self.redis_url,
                "REDIS_PREFIX": self.prefix,
                "TELEGRAM_API_URL": self.fake.url,
                "WEBHOOK_URL": self.proxy.url,
                "WEBHOOK_SECRET": self.secret,
                "WEBHOOK_HOST": "127.0.0.1",
                "WEBHOOK_PORT": str(port),
                "WEBHOOK_PATH": PATH,
                **self.env,
            }
            with log.open("wb") as out:
                self.procs.append(
                    await asyncio.create_subprocess_exec(
                        sys.executable, "-m", "telegram_bot", env=env, stdout=out, stderr=out
                    )
                )
        await asyncio.gather(*(self._listening(i) for i in range(self.count)))

    async def _listening(self, i: int) -> None:
        """Until process ``i`` says it serves its webhook (RuntimeError if it dies)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + START_TIMEOUT
        while "Webhook mode" not in self.logs[i].read_text():
            if self.procs[i].returncode is not None or loop.time() > deadline:
                raise RuntimeError(f"bot process {i} did not start:\n{self.log_tail()}")
            await asyncio.sleep(0.1)

    async def stop(self) -> list[int | None]:
        """SIGINT to each process (it finishes the updates in hand, flushes its
        pending edits); their exit codes.  Once: later calls return the same."""
        if self._codes is not None:
            return self._codes
        for proc in self.procs:
            if proc.returncode is None:
                proc.send_signal(signal.SIGINT)
        codes: list[int | None] = []
        for proc in self.procs:
            try:
                codes.append(await asyncio.wait_for(proc.wait(), STOP_TIMEOUT))
            except TimeoutError:
                proc.kill()
                await proc.wait()
                codes.append(None)
        await self.proxy.stop()
        await self.svc.aclose()
        self._codes = codes
        return codes

    async def __aenter__(self) -> BotFleet:
        try:
            await self.start()
        except BaseException:
            await self.stop()
            self._tmp.cleanup()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        try:
            await self.stop()
        finally:
            self._tmp.cleanup()

    async def wait_hands(self, table_id: str, users: Sequence[SimUser]) -> None:
        """Until every user's hand message of the table is recorded."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + START_TIMEOUT
        while True:
            hands = (await self.ui.table(table_id)).hands
            if all(u.id in hands for u in users):
                return
            if loop.time() > deadline:
                raise TimeoutError(f"hand messages of {table_id} never recorded")
            await asyncio.sleep(0.05)


async def open_group_game(
    fleet: BotFleet, humans: Sequence[SimUser], variant: str = "chuvash", title: str = "Cards"
) -> tuple[str, Chat]:
    """A started group game of ``humans`` (the first creates it): its table id
    and the group."""
    owner = humans[0]
    group = owner.create_group(title, *humans[1:])
    owner.add_bot_to(group)
    for u in humans:
        u.start()
        await u.wait_message(timeout=START_TIMEOUT)
    owner.send(f"/new {variant}", group)
    lobby = await owner.wait_message("Invitation link", group, timeout=START_TIMEOUT)
    for u in humans[1:]:
        await u.press("Join", message=lobby, chat=group).wait_answer(START_TIMEOUT)
    table = await fleet.svc.tables.where(owner.id)
    if table is None or len(table.seats) != len(humans):
        raise RuntimeError(f"the lobby did not fill: {table}")
    await owner.press("Start", message=lobby, chat=group).wait_answer(START_TIMEOUT)
    await fleet.wait_hands(table.id, humans)
    return table.id, group
