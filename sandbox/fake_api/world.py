"""The in-memory world behind the fake Bot API: users, chats, messages, queries
and the bot's pending updates (its change feed: :mod:`sandbox.fake_api.feed`).

Everything here is synchronous and runs on one event loop.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import secrets
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from engine.clock import Clock
from sandbox.fake_api.feed import ChangeFeed
from sandbox.fake_api.limits import FakeFloodControl, RateLimits, Stats
from sandbox.fake_api.models import (
    CallbackQuery,
    Chat,
    ChatType,
    InlineQuery,
    Message,
    MessageMatch,
    User,
)
from sandbox.fake_api.topics import GENERAL, ICON_COLOR
from sandbox.fake_api.views import view_of, visible_to

PRESENT = ("creator", "administrator", "member", "restricted")
MAX_QUERIES = 10_000
CALLBACK_ANSWER_WINDOW = 15.0
"""Seconds a callback query may be answered in: Telegram drops a late answer
("query is too old and response timeout expired or query ID is invalid") and
the user's client stops waiting for it (exact value not published)."""

# Telegram's default when allowed_updates was never given.
DEFAULT_UPDATE_TYPES = frozenset(
    {
        "message",
        "edited_message",
        "channel_post",
        "edited_channel_post",
        "business_connection",
        "business_message",
        "edited_business_message",
        "deleted_business_messages",
        "inline_query",
        "chosen_inline_result",
        "callback_query",
        "shipping_query",
        "pre_checkout_query",
        "purchased_paid_media",
        "poll",
        "poll_answer",
        "my_chat_member",
        "chat_join_request",
        "chat_boost",
        "removed_chat_boost",
    }
)


@dataclass(frozen=True)
class BotOptions:
    """How the simulated bot account is set up in @BotFather."""

    token: str = "123456789:FAKE-token-for-tests"
    first_name: str = "Durak Bot"
    username: str = "durak_test_bot"
    privacy_mode: bool = True  # in groups: only commands, replies, service messages
    inline_mode: bool = True
    inline_feedback: bool = True  # chosen_inline_result updates
    can_join_groups: bool = True

    @property
    def bot_id(self) -> int:
        return int(self.token.split(":", 1)[0])


class World(ChangeFeed):
    """Users, chats, messages, queries and the bot's pending updates; every change
    goes through the :class:`ChangeFeed` (``touch``) that waiters watch."""

    def __init__(
        self,
        options: BotOptions | None = None,
        limits: RateLimits | None = None,
        clock: Clock = time.monotonic,
        event_history: int = 10_000,
        callback_answer_window: float = CALLBACK_ANSWER_WINDOW,
    ) -> None:
        super().__init__(event_history)
        self.options = options or BotOptions()
        self.clock = clock
        self.callback_answer_window = callback_answer_window
        self.limiter = FakeFloodControl(limits or RateLimits(), clock)
        self.stats = Stats()
        self.bot = User(
            id=self.options.bot_id,
            first_name=self.options.first_name,
            username=self.options.username,
            is_bot=True,
        )
        # "from" of an anonymous group admin's message (its sender_chat: the group)
        anon = User(id=1087968824, first_name="Group", username="GroupAnonymousBot", is_bot=True)
        self.anonymous_admin = anon
        self.users: dict[int, User] = {self.bot.id: self.bot, anon.id: anon}
        self.chats: dict[int, Chat] = {}
        self.callback_queries: dict[str, CallbackQuery] = {}
        self.inline_queries: dict[str, InlineQuery] = {}
        self.inline_messages: dict[str, Message] = {}
        # Every text the bot sent or edited in, in order (deleted messages too), so a
        # test can check everything a user was ever shown.
        self.outbox: deque[dict[str, Any]] = deque(maxlen=100_000)
        self.commands: dict[tuple[str, str], list[dict[str, str]]] = {}
        self.bot_settings: dict[str, Any] = {}  # names, descriptions
        # the menu buttons (setChatMenuButton, #42): a private chat's own, the
        # bot's default under None
        self.menu_buttons: dict[int | None, dict[str, Any]] = {}
        # the bot's Mini Apps by short name (@BotFather's /newapp): their URLs
        self.web_apps: dict[str, str] = {}
        # updates
        self.updates: deque[dict[str, Any]] = deque()
        self.allowed_updates: frozenset[str] = DEFAULT_UPDATE_TYPES
        self.webhook: dict[str, Any] = {}
        self.poll_generation = 0
        # Like Telegram's, update and callback query ids never repeat across fakes:
        # a bot that remembers them (its update dedupe, in a Redis that outlives
        # this fake: the sandbox with REDIS_URL) must not take new ones for old.
        self._next_update_id = 10_000 + secrets.randbelow(10**9)
        # ids
        self._user_ids = itertools.count(100_001)
        self._group_ids = itertools.count(1)
        self._query_ids = itertools.count(1 + secrets.randbelow(10**12) * 10**6)
        self._updates_changed = asyncio.Event()
        self.closing = False

    # ------------------------------------------------------------ updates
    def enqueue(self, kind: str, payload: dict[str, Any]) -> dict[str, Any] | None:
        """Queue an update for the bot unless ``allowed_updates`` excludes its type."""
        if kind not in self.allowed_updates:
            return None
        self._next_update_id += 1
        update = {"update_id": self._next_update_id, kind: payload}
        self.updates.append(update)
        self.touch("update", detail={"update_id": self._next_update_id, "type": kind})
        self._updates_changed.set()
        self._updates_changed = asyncio.Event()
        return update

    def confirm_updates(self, offset: int) -> None:
        """getUpdates ``offset``: forget updates below it (negative: keep the last -offset)."""
        if offset < 0:
            while len(self.updates) > -offset:
                self.updates.popleft()
            return
        while self.updates and self.updates[0]["update_id"] < offset:
            self.updates.popleft()

    def updates_event(self) -> asyncio.Event:
        return self._updates_changed

    def wake_pollers(self) -> None:
        self._updates_changed.set()
        self._updates_changed = asyncio.Event()

    # ------------------------------------------------------------ ids and lookups
    def new_query_id(self) -> str:
        return f"{self.bot.id}{next(self._query_ids):08d}"

    def chat_instance(self, chat: Chat) -> str:
        digest = hashlib.sha1(f"{self.bot.id}:{chat.id}".encode()).hexdigest()
        return str(int(digest[:15], 16))

    def now(self) -> int:
        return int(time.time())

    def user(self, user_id: int) -> User:
        return self.users[user_id]

    def chat(self, chat_id: int) -> Chat:
        return self.chats[chat_id]

    # ------------------------------------------------------------ creating things
    def add_user(
        self,
        first_name: str,
        *,
        username: str | None = None,
        language_code: str | None = "en",
        last_name: str | None = None,
        user_id: int | None = None,
    ) -> User:
        uid = user_id if user_id is not None else next(self._user_ids)
        while user_id is None and uid in self.users:
            uid = next(self._user_ids)
        if uid in self.users:
            raise ValueError(f"user {uid} exists")
        user = User(
            id=uid,
            first_name=first_name,
            last_name=last_name,
            username=username,
            language_code=language_code,
        )
        self.users[uid] = user
        self.touch("user_added", user_id=uid)
        return user

    def private_chat(self, user: User) -> Chat:
        """The user's chat with the bot (its id is the user's id, as in Telegram)."""
        chat = self.chats.get(user.id)
        if chat is None:
            chat = Chat(id=user.id, type="private", user_id=user.id)
            self.chats[user.id] = chat
            self.touch("chat_added", chat_id=chat.id, user_id=user.id)
        return chat

    def direct_chat(self, a: User, b: User) -> Chat:
        """A chat between two simulated users (the bot cannot see it)."""
        pair = (min(a.id, b.id), max(a.id, b.id))
        for chat in self.chats.values():
            if chat.peer_ids == pair:
                return chat
        chat = Chat(
            id=10**12 + next(self._group_ids),
            type="private",
            peer_ids=pair,
            title=f"{a.first_name} & {b.first_name}",
        )
        self.chats[chat.id] = chat
        self.touch("chat_added", chat_id=chat.id)
        return chat

    def create_group(
        self,
        title: str,
        members: list[User],
        *,
        chat_type: ChatType = "group",
        username: str | None = None,
        forum: bool = False,
    ) -> Chat:
        """A group whose first member is its creator; the bot is not in it yet.
        ``forum``: a supergroup with topics (``topics.py``), none but General yet."""
        if chat_type == "private":
            raise ValueError("a group is 'group' or 'supergroup'")
        if forum and chat_type != "supergroup":
            raise ValueError("only a supergroup is a forum")
        number = next(self._group_ids)
        chat_id = (
            -(1_001_000_000_000 + number) if chat_type == "supergroup" else -(4_000_000 + number)
        )
        chat = Chat(id=chat_id, type=chat_type, title=title, username=username, is_forum=forum)
        if forum:  # message 1 is General's (Telegram's thread 1): no topic takes it
            chat.next_message_id = GENERAL + 1
        for index, member in enumerate(members):
            chat.members[member.id] = "creator" if index == 0 else "member"
        self.chats[chat_id] = chat
        self.touch("chat_added", chat_id=chat_id)
        return chat

    def create_topic(self, chat: Chat, by: User, name: str) -> Message:
        """A new topic of the forum ``chat``: its ``forum_topic_created`` message,
        whose id is the topic's thread id (the message is in the topic)."""
        if not chat.is_forum:
            raise ValueError(f"chat {chat.id} is not a forum")
        if not 1 <= len(name) <= 128:
            raise ValueError("a topic's name is 1-128 characters")
        created = {"forum_topic_created": {"name": name, "icon_color": ICON_COLOR}}
        chat.topics[chat.next_message_id] = name
        return self.add_message(chat, by, service=created, thread_id=chat.next_message_id)

    def upgrade_group(self, chat: Chat) -> Chat:
        """``chat``, a basic group, becomes a supergroup under a new id, as
        Telegram does it: its members, their statuses and the bot's carry over
        (no ``my_chat_member`` update), its history stays with the old id, and
        the old id answers every method with 400 and ``migrate_to_chat_id``."""
        if chat.type != "group" or chat.migrated_to is not None:
            raise ValueError(f"chat {chat.id} is not a basic group")
        new = Chat(
            id=-(1_001_000_000_000 + next(self._group_ids)),
            type="supergroup",
            title=chat.title,
            username=chat.username,
            members=dict(chat.members),
            bot_status=chat.bot_status,
        )
        self.chats[new.id] = new
        chat.migrated_to = new.id
        self.touch("chat_added", chat_id=new.id, detail={"migrated_from": chat.id})
        return new

    def add_query(self, query: CallbackQuery | InlineQuery) -> None:
        """Remember a query until it is answered (the oldest ones are forgotten)."""
        store: dict[str, Any] = (
            self.callback_queries if isinstance(query, CallbackQuery) else self.inline_queries
        )
        store[query.id] = query
        while len(store) > MAX_QUERIES:
            del store[next(iter(store))]

    def record_outgoing(self, message: Message, kind: str) -> None:
        """Note what the bot sent or edited and who was shown it (``visible_to``: the
        receiver alone for an ephemeral message, nobody if it did not reach him)."""
        self.outbox.append(
            {
                "kind": kind,
                "chat_id": message.chat_id,
                "message_id": message.message_id,
                "inline_message_id": message.inline_message_id,
                "ephemeral_message_id": message.ephemeral_message_id,
                "receiver_user_id": message.receiver_id,
                "message_thread_id": message.thread_id,  # its forum topic (None: General)
                "visible_to": visible_to(message.chat, message, PRESENT),
                "text": message.text,
                "reply_markup": message.reply_markup,
                "version": message.version,
                "at": float(self.clock()),  # when it went out (the fake's clock)
            }
        )

    def shown_to(self, user_id: int) -> list[dict[str, Any]]:
        """Every outbox entry this user was shown (a leak check's input)."""
        return [entry for entry in self.outbox if user_id in entry["visible_to"]]

    def add_message(self, chat: Chat, from_user: User, **fields: Any) -> Message:
        message = Message(
            chat=chat,
            message_id=chat.next_message_id,
            date=self.now(),
            from_id=from_user.id,
            **fields,
        )
        chat.next_message_id += 1
        chat.messages[message.message_id] = message
        message.version = message.created = self.touch(
            "message_new", chat_id=chat.id, message_id=message.message_id, user_id=from_user.id
        ).seq
        return message

    def message_changed(self, message: Message, kind: str = "message_edited") -> None:
        message.version = self.touch(
            kind, chat_id=message.chat_id, message_id=message.message_id
        ).seq

    # ------------------------------------------------------------ reading
    def messages(self, chat: Chat | int, viewer: int | None = None) -> list[Message]:
        """The chat's messages as they are now, oldest first (deleted ones gone); with
        ``viewer``, as his app shows them (his ephemeral messages too)."""
        found = chat if isinstance(chat, Chat) else self.chats[chat]
        return list(found.messages.values()) if viewer is None else view_of(found, viewer)

    def last_message(
        self, chat: Chat | int, from_bot: bool = True, viewer: int | None = None
    ) -> Message | None:
        for message in reversed(self.messages(chat, viewer)):
            if not from_bot or message.from_id == self.bot.id:
                return message
        return None

    def find_messages(
        self,
        chat: Chat | int,
        match: MessageMatch | None = None,
        *,
        since: int = 0,
        from_bot: bool = True,
        viewer: int | None = None,
    ) -> list[Message]:
        """Messages (new or edited after version ``since``) that match."""
        return [
            m
            for m in self.messages(chat, viewer)
            if m.version > since
            and (not from_bot or m.from_id == self.bot.id)
            and (match is None or m.matches(match))
        ]

    async def wait_message(
        self,
        chat: Chat | int,
        match: MessageMatch | None = None,
        *,
        since: int = 0,
        from_bot: bool = True,
        timeout: float = 10.0,
        viewer: int | None = None,
    ) -> Message:
        """The newest message that matches, created or edited after version ``since``."""

        def newest() -> Message | None:
            found = self.find_messages(chat, match, since=since, from_bot=from_bot, viewer=viewer)
            return found[-1] if found else None

        chat_id = chat.id if isinstance(chat, Chat) else chat
        return await self.wait_for(
            newest, timeout, what=f"a message matching {match!r} in chat {chat_id}"
        )

    def commands_for(self, user: User, chat: Chat) -> list[dict[str, str]]:
        """The command menu this user sees in this chat (Telegram's scope order)."""
        language = user.language_code or ""
        if chat.is_group:
            admin = chat.members.get(user.id) in ("creator", "administrator")
            scopes = [f"chat_member:{chat.id}:{user.id}"]
            if admin:
                scopes.append(f"chat_administrators:{chat.id}")
            scopes.append(f"chat:{chat.id}")
            if admin:
                scopes.append("all_chat_administrators")
            scopes.append("all_group_chats")
        else:
            scopes = [f"chat:{chat.id}", "all_private_chats"]
        scopes.append("default")
        for scope in scopes:
            for lang in (language, ""):
                if (scope, lang) in self.commands:
                    return self.commands[(scope, lang)]
        return []

    def register_web_app(self, short_name: str, url: str) -> None:
        """What @BotFather's ``/newapp`` does: the bot's Mini App ``short_name``
        (its direct link ``t.me/<bot>/<short_name>``) opens ``url``."""
        self.web_apps[short_name.lower()] = url

    def menu_button_for(self, chat: Chat) -> dict[str, Any]:
        """The menu button a private chat shows: its own, else the bot's default
        (the command list until one is set); a group shows the commands."""
        if chat.is_group:
            return {"type": "commands"}
        return self.menu_buttons.get(chat.id) or self.menu_buttons.get(None, {"type": "commands"})

    def snapshot(self) -> dict[str, Any]:
        """The whole world as JSON (for a page or a failing test's report)."""
        return {
            "version": self.version,
            "bot": {**self.bot.to_api(), "privacy_mode": self.options.privacy_mode},
            "users": [u.to_json() for u in self.users.values() if not u.is_bot],
            "chats": [c.to_json(self.users) for c in self.chats.values()],
            "pending_updates": len(self.updates),
            "webhook": {k: v for k, v in self.webhook.items() if k != "secret_token"},
            "commands": [
                {"scope": scope, "language_code": lang, "commands": cmds}
                for (scope, lang), cmds in self.commands.items()
            ],
            "menu_buttons": {
                "default": self.menu_buttons.get(None, {"type": "commands"}),
                "chats": {str(k): v for k, v in self.menu_buttons.items() if k is not None},
            },
            "callback_queries": [
                {"id": q.id, "user_id": q.user_id, "data": q.data, "answer": q.answer}
                for q in list(self.callback_queries.values())[-50:]
            ],
            "stats": self.stats.to_json(),
        }
