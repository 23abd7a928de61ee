"""The fake Bot API over HTTP (aiohttp on loopback), and the handle tests hold.

``{url}/bot{token}/{method}`` answers like Telegram. ``{url}/_fake/snapshot``
and ``{url}/_fake/events?since=N&timeout=S`` let a page show the world and follow
its changes; ``POST {url}/_fake/act`` makes a simulated user act (``control.py``).
``{url}/telegram-web-app.js`` is the stand-in of Telegram's Mini App script
(#42, :mod:`sandbox.fake_api.web_apps`).
With a webhook set, pending updates are POSTed to it instead of queued for
getUpdates.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any

import aiohttp
from aiohttp import web

from engine.clock import Clock, scaled

# The method modules register themselves in the table when imported.
from sandbox.fake_api import (  # noqa: F401
    methods_bot,
    methods_ephemeral,
    methods_messages,
    methods_queries,
)
from sandbox.fake_api.control import ActionError, perform
from sandbox.fake_api.errors import BotApiError
from sandbox.fake_api.limits import RateLimits, Stats
from sandbox.fake_api.models import Chat, ChatType, Message, MessageMatch, User
from sandbox.fake_api.params import CallParams
from sandbox.fake_api.registry import find_method
from sandbox.fake_api.users import SimUser
from sandbox.fake_api.web_apps import SCRIPT_PATH, STAND_IN
from sandbox.fake_api.world import CALLBACK_ANSWER_WINDOW, BotOptions, World

if TYPE_CHECKING:
    from aiogram import Bot
    from aiogram.client.session.aiohttp import AiohttpSession

log = logging.getLogger(__name__)


def _json_response(body: dict[str, Any], status: int = 200) -> web.Response:
    return web.json_response(body, status=status, dumps=lambda o: json.dumps(o, ensure_ascii=False))


async def _read_params(request: web.Request) -> dict[str, Any]:
    params: dict[str, Any] = dict(request.query)
    if request.method != "POST" or not request.can_read_body:
        return params
    if request.content_type == "application/json":
        body = await request.json()
        if isinstance(body, dict):
            params.update(body)
        return params
    form = await request.post()
    for key, value in form.items():
        if isinstance(value, str):
            params[key] = value
        elif isinstance(value, bytes | bytearray):
            params[key] = bytes(value).decode(errors="replace")
        else:  # an uploaded file: the fake keeps only its name
            params[key] = value.filename
    return params


class FakeTelegram:
    """A fake Telegram for one bot: start it, point aiogram at ``url``, drive users.

    ``async with FakeTelegram() as fake:`` or ``url = await fake.start()`` /
    ``await fake.stop()``. ``port=0`` takes a free port.
    """

    def __init__(
        self,
        *,
        options: BotOptions | None = None,
        limits: RateLimits | None = None,
        clock: Clock = time.monotonic,
        host: str = "127.0.0.1",
        port: int = 0,
        callback_answer_window: float = CALLBACK_ANSWER_WINDOW,
        time_scale: float = 1.0,
    ) -> None:
        # Telegram's time ``time_scale`` times as fast (#37): its flood windows
        # and retry_after read on the scaled clock; a press's answer window, a
        # latency bound, stays ``callback_answer_window`` real seconds
        clock = scaled(clock, time_scale)
        self.time_scale = time_scale
        self.world = World(
            options, limits, clock, callback_answer_window=callback_answer_window * time_scale
        )
        self.host = host
        self.port = port
        self.url = ""
        self.reply_delays: dict[str, float] = {}
        """Seconds the answer of a method (by name) takes to come back after the
        method ran: network latency on the way back (the message exists, and users
        see it, before the bot knows its id)."""
        self._runner: web.AppRunner | None = None
        self._webhook_task: asyncio.Task[None] | None = None

    # ------------------------------------------------------------ lifecycle
    def make_app(self) -> web.Application:
        app = web.Application(client_max_size=50 * 1024 * 1024)
        app.router.add_route("*", "/bot{token}/{method}", self._handle_api)
        app.router.add_get("/_fake/snapshot", self._handle_snapshot)
        app.router.add_get("/_fake/events", self._handle_events)
        app.router.add_post("/_fake/act", self._handle_act)
        app.router.add_get(SCRIPT_PATH, self._handle_web_app_js)
        return app

    async def start(self) -> str:
        """Serve on ``host:port``; return the base URL (``http://127.0.0.1:PORT``)."""
        if self._runner is not None:
            return self.url
        self.world.closing = False
        runner = web.AppRunner(self.make_app(), shutdown_timeout=2.0, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, self.host, self.port)
        await site.start()
        self._runner = runner
        server = site._server
        assert server is not None
        sockets = getattr(server, "sockets", None) or []
        port = sockets[0].getsockname()[1] if sockets else self.port
        self.url = f"http://{self.host}:{port}"
        self._webhook_task = asyncio.create_task(self._deliver_webhooks())
        return self.url

    async def stop(self) -> None:
        """Answer pending long polls, stop webhook delivery, close the server."""
        self.world.closing = True
        self.world.wake_pollers()
        self.world.touch("closing")
        if self._webhook_task is not None:
            self._webhook_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._webhook_task
            self._webhook_task = None
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeTelegram:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    # ------------------------------------------------------------ the Bot API
    async def call(
        self, method: str, params: dict[str, Any], gone: Callable[[], bool] | None = None
    ) -> dict[str, Any]:
        """Run one Bot API method as the bot; return Telegram's JSON answer.
        ``gone()``: the caller hung up meanwhile -- an error then reaches nobody
        and is not counted as one (a stopped poller's long poll ended by its
        successor's, #28)."""
        found = find_method(method)
        name = method if found is None else found[0]
        try:
            if found is None:
                raise BotApiError(404, "Not Found: method not found")
            result = await found[1](self.world, CallParams(params))
        except BotApiError as error:
            counted = gone is None or not gone()
            self.world.stats.record(
                name, error.code if counted else None, error.description if counted else ""
            )
            return error.to_json()
        self.world.stats.record(name, None)
        if delay := self.reply_delays.get(name, 0.0):
            await asyncio.sleep(delay)
        return {"ok": True, "result": result}

    async def _handle_api(self, request: web.Request) -> web.Response:
        if request.match_info["token"] != self.world.options.token:
            body = BotApiError(401, "Unauthorized").to_json()
            return _json_response(body, 401)
        try:
            params = await _read_params(request)
        except (ValueError, aiohttp.ClientError):
            return _json_response(
                BotApiError(400, "Bad Request: can't parse request").to_json(), 400
            )

        def gone() -> bool:
            return request.transport is None or request.transport.is_closing()

        body = await self.call(request.match_info["method"], params, gone)
        return _json_response(body, 200 if body["ok"] else int(body["error_code"]))

    # ------------------------------------------------------------ Mini Apps (#42)
    @property
    def web_app_js(self) -> str:
        """The URL of the stand-in ``telegram-web-app.js`` (``TELEGRAM_WEB_APP_JS``
        of a bot whose Mini App the sandbox opens)."""
        return self.url + SCRIPT_PATH

    def register_web_app(self, short_name: str, url: str) -> None:
        """@BotFather's ``/newapp``: ``t.me/<bot>/<short_name>`` opens ``url``."""
        self.world.register_web_app(short_name, url)

    async def _handle_web_app_js(self, request: web.Request) -> web.StreamResponse:
        """The stand-in of Telegram's script (:mod:`sandbox.fake_api.web_apps`):
        any page may load it, as telegram.org's."""
        return web.FileResponse(
            STAND_IN,
            headers={
                "Content-Type": "application/javascript; charset=utf-8",
                "Access-Control-Allow-Origin": "*",
                "Cache-Control": "no-store",
            },
        )

    # ------------------------------------------------------------ page endpoints
    async def _handle_snapshot(self, request: web.Request) -> web.Response:
        return _json_response(self.world.snapshot())

    async def _handle_events(self, request: web.Request) -> web.Response:
        """Events after ``since``; waits up to ``timeout`` seconds when there are none."""
        world = self.world
        since = int(request.query.get("since", "0"))
        timeout = min(60.0, float(request.query.get("timeout", "0")))
        if not world.events_since(since) and timeout > 0 and not world.closing:
            await world.wait_changed(timeout)
        events = world.events_since(since)
        oldest = world.events[0].seq if world.events else world.version + 1
        return _json_response(
            {
                "version": world.version,
                "reset": since + 1 < oldest and since < world.version,
                "events": [event.to_json() for event in events],
            }
        )

    async def _handle_act(self, request: web.Request) -> web.Response:
        """A simulated user's action (see ``control.perform``)."""
        try:
            body = await request.json()
            if not isinstance(body, dict):
                raise ActionError("the body must be a JSON object")
            result = await perform(self.world, body)
        except (ValueError, KeyError, TypeError) as exc:
            return _json_response({"ok": False, "error": str(exc)}, 400)
        return _json_response({"ok": True, "result": result, "version": self.world.version})

    # ------------------------------------------------------------ webhook
    async def _deliver_webhooks(self) -> None:
        """POST pending updates one by one to the webhook while one is set."""
        world = self.world
        backoff = 0.05
        async with aiohttp.ClientSession() as session:
            while not world.closing:
                changed = world.updates_event()
                url = world.webhook.get("url")
                if not url or not world.updates:
                    await changed.wait()
                    continue
                update = world.updates[0]
                error = await self._post_update(session, url, update)
                if error is None:
                    if world.updates and world.updates[0] is update:
                        world.updates.popleft()
                        world.touch("update_delivered", detail={"update_id": update["update_id"]})
                    backoff = 0.05
                    continue
                world.webhook["last_error_date"] = world.now()
                world.webhook["last_error_message"] = error
                await asyncio.sleep(backoff)
                backoff = min(2.0, backoff * 2)

    async def _post_update(
        self, session: aiohttp.ClientSession, url: str, update: dict[str, Any]
    ) -> str | None:
        headers = {}
        if self.world.webhook.get("secret_token"):
            headers["X-Telegram-Bot-Api-Secret-Token"] = self.world.webhook["secret_token"]
        try:
            async with session.post(url, json=update, headers=headers) as response:
                if response.status >= 300:
                    return f"Wrong response from the webhook: {response.status} {response.reason}"
                reply = await _read_webhook_reply(response)
        except (aiohttp.ClientError, TimeoutError) as exc:
            return f"Connection failed: {exc}"
        if reply and reply.get("method"):
            method = str(reply.pop("method"))
            await self.call(method, reply)
        return None

    # ------------------------------------------------------------ shortcuts
    @property
    def token(self) -> str:
        return self.world.options.token

    @property
    def stats(self) -> Stats:
        return self.world.stats

    @property
    def version(self) -> int:
        return self.world.version

    @property
    def bot_user(self) -> User:
        return self.world.bot

    def session(self) -> AiohttpSession:
        """An aiogram session that talks to this fake."""
        from aiogram.client.session.aiohttp import AiohttpSession
        from aiogram.client.telegram import TelegramAPIServer

        if not self.url:
            raise RuntimeError("start the fake first")
        return AiohttpSession(api=TelegramAPIServer.from_base(self.url))

    def make_bot(self, **kwargs: Any) -> Bot:
        """A real aiogram ``Bot`` on this fake (close it: ``await bot.session.close()``)."""
        from aiogram import Bot

        return Bot(self.token, session=self.session(), **kwargs)

    def add_user(
        self,
        first_name: str,
        *,
        username: str | None = None,
        language_code: str | None = "en",
        last_name: str | None = None,
        user_id: int | None = None,
    ) -> SimUser:
        user = self.world.add_user(
            first_name,
            username=username,
            language_code=language_code,
            last_name=last_name,
            user_id=user_id,
        )
        return SimUser(self.world, user)

    def sim(self, user: User | int) -> SimUser:
        """The simulated user for an existing account."""
        return SimUser(self.world, self.world.users[user if isinstance(user, int) else user.id])

    def create_group(
        self, title: str, *members: SimUser, chat_type: ChatType = "group", forum: bool = False
    ) -> Chat:
        kind: ChatType = "supergroup" if forum else chat_type
        return self.world.create_group(
            title, [m.user for m in members], chat_type=kind, forum=forum
        )

    def messages(self, chat: Chat | int, viewer: int | None = None) -> list[Message]:
        """The chat's messages (with ``viewer``: as he sees them, ephemeral ones too)."""
        return self.world.messages(chat, viewer)

    def last_message(self, chat: Chat | int, viewer: int | None = None) -> Message | None:
        return self.world.last_message(chat, viewer=viewer)

    async def wait_message(
        self,
        chat: Chat | int,
        match: MessageMatch | None = None,
        *,
        since: int = 0,
        timeout: float = 10.0,
        viewer: int | None = None,
    ) -> Message:
        return await self.world.wait_message(
            chat, match, since=since, timeout=timeout, viewer=viewer
        )

    def snapshot(self) -> dict[str, Any]:
        return self.world.snapshot()


async def _read_webhook_reply(response: aiohttp.ClientResponse) -> dict[str, Any] | None:
    """A method the webhook answered with (aiogram sends it as multipart form data)."""
    if response.content_type.startswith("multipart/"):
        reader = aiohttp.MultipartReader.from_response(response)
        fields: dict[str, Any] = {}
        while True:
            part = await reader.next()
            if part is None:
                break
            if isinstance(part, aiohttp.BodyPartReader) and part.name:
                fields[part.name] = await part.text()
        return fields
    if response.content_type == "application/json":
        body = await response.json()
        return body if isinstance(body, dict) else None
    return None
