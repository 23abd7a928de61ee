"""A small webhook proxy in front of N bot processes (issue #12): the one URL
Telegram (or the fake Bot API) POSTs updates to, each update passed on with its
``X-Telegram-Bot-Api-Secret-Token`` header to

* ``round_robin``: one process, the next in turn (a process that refuses or is
  down answers 502, so Telegram redelivers the update -- to the next process);
* ``broadcast``: every process at once (to show that N processes given the same
  update apply it once); 200 when every process took it, else 502 (and the
  update comes again, to all of them).

The answer is the (first) process's own, so a method in a webhook reply still
reaches Telegram once.  ``python -m sandbox.webhook_proxy --port P [--broadcast]
URL...`` runs one until Ctrl-C.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
from collections import Counter
from collections.abc import Sequence

import aiohttp
from aiohttp import web

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
MODES = ("round_robin", "broadcast")


class WebhookProxy:
    """``await start()`` serves on ``host:port`` (0: a free port) at ``path``;
    ``url`` is what to give ``setWebhook``; ``forwarded[target]`` counts the
    updates each process took."""

    def __init__(
        self,
        targets: Sequence[str],
        *,
        mode: str = "round_robin",
        host: str = "127.0.0.1",
        port: int = 0,
        path: str = "/telegram",
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"mode is one of {MODES}, not {mode!r}")
        if not targets:
            raise ValueError("no bot process to forward to")
        self.targets = list(targets)
        self.mode = mode
        self.host, self.port, self.path = host, port, path
        self.url = ""
        self.forwarded: Counter[str] = Counter()
        self.failed: Counter[str] = Counter()
        self._turn = itertools.cycle(range(len(self.targets)))
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None

    async def start(self) -> str:
        app = web.Application()
        app.router.add_post(self.path, self._handle)
        self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60))
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        server = site._server
        sockets = getattr(server, "sockets", None) or []
        port = sockets[0].getsockname()[1] if sockets else self.port
        self.url = f"http://{self.host}:{port}{self.path}"
        return self.url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def __aenter__(self) -> WebhookProxy:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        headers = {"Content-Type": request.headers.get("Content-Type", "application/json")}
        if SECRET_HEADER in request.headers:
            headers[SECRET_HEADER] = request.headers[SECRET_HEADER]
        if self.mode == "round_robin":
            targets = [self.targets[next(self._turn)]]
        else:
            targets = self.targets
        answers = await asyncio.gather(*(self._forward(t, body, headers) for t in targets))
        if any(a is None for a in answers):
            return web.Response(status=502, text="a bot process did not take the update")
        first = answers[0]
        assert first is not None
        return first

    async def _forward(
        self, target: str, body: bytes, headers: dict[str, str]
    ) -> web.Response | None:
        """The process's answer (None: it refused, or could not be reached)."""
        assert self._session is not None
        try:
            async with self._session.post(target, data=body, headers=headers) as resp:
                payload = await resp.read()
                if resp.status >= 300 and resp.status not in (401, 403):
                    self.failed[target] += 1
                    return None
                if resp.status < 300:
                    self.forwarded[target] += 1
                return web.Response(
                    status=resp.status, body=payload, content_type=resp.content_type
                )
        except (aiohttp.ClientError, TimeoutError):
            self.failed[target] += 1
            return None


async def _serve(args: argparse.Namespace) -> None:
    mode = "broadcast" if args.broadcast else "round_robin"
    proxy = WebhookProxy(args.targets, mode=mode, host=args.host, port=args.port, path=args.path)
    async with proxy:
        print(f"Webhook proxy ({mode}): {proxy.url} -> {', '.join(args.targets)}", flush=True)
        await asyncio.Event().wait()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", nargs="+", help="the bot processes' webhook URLs")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8443)
    parser.add_argument("--path", default="/telegram")
    parser.add_argument("--broadcast", action="store_true", help="every update to every process")
    args = parser.parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(args))


if __name__ == "__main__":
    main()
