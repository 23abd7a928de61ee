"""The fake's world: users, chats, messages with inline keyboards, queries, events.

Plain dataclasses; ``World`` (``world.py``) owns them and turns them into Bot
API JSON with each object's ``to_api``.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from sandbox.fake_api.text import iter_buttons

ChatType = Literal["private", "group", "supergroup"]
# What a user's membership of a chat is, in Telegram's words.
MemberStatus = Literal["creator", "administrator", "member", "restricted", "left", "kicked"]
MessageMatch = str | re.Pattern[str] | Callable[["Message"], bool]


@dataclass
class User:
    """A Telegram account (a simulated human, or the bot itself)."""

    id: int
    first_name: str
    last_name: str | None = None
    username: str | None = None
    language_code: str | None = None
    is_bot: bool = False
    started: bool = False  # pressed Start (sent anything) in his chat with the bot
    blocked: bool = False  # blocked the bot
    deactivated: bool = False  # deleted his account
    online: bool = True  # offline: ephemeral messages and their edits do not reach him

    def to_api(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "is_bot": self.is_bot, "first_name": self.first_name}
        if self.last_name:
            data["last_name"] = self.last_name
        if self.username:
            data["username"] = self.username
        if self.language_code and not self.is_bot:
            data["language_code"] = self.language_code
        return data

    @property
    def full_name(self) -> str:
        return f"{self.first_name} {self.last_name}" if self.last_name else self.first_name

    def to_json(self) -> dict[str, Any]:
        return {
            **self.to_api(),
            "started": self.started,
            "blocked": self.blocked,
            "deactivated": self.deactivated,
            "online": self.online,
        }


@dataclass
class Chat:
    """A chat: a user's private chat with the bot, a group, or two users' direct chat.

    ``peer_ids`` is set only for a direct chat between two simulated users (where
    an inline-mode invitation can be posted); the bot has no access to it.
    """

    id: int
    type: ChatType
    title: str | None = None
    username: str | None = None
    user_id: int | None = None  # private chat with the bot: whose
    peer_ids: tuple[int, int] | None = None
    members: dict[int, MemberStatus] = field(default_factory=dict)  # groups only
    bot_status: MemberStatus = "left"  # groups only
    messages: dict[int, Message] = field(default_factory=dict)  # in order, deleted gone
    next_message_id: int = 1
    # Ephemeral messages (groups only; ``ephemeral.py``): the bot's side by
    # ephemeral_message_id, and the copy each receiver was actually shown.
    ephemeral: dict[int, Message] = field(default_factory=dict)
    ephemeral_shown: dict[int, Message] = field(default_factory=dict)
    next_ephemeral_id: int = 1
    pinned_message_id: int | None = None
    migrated_to: int | None = None  # a group upgraded to a supergroup: its id
    # A forum supergroup (``Chat.is_forum``, ``topics.py``): its topics by thread
    # id (the id of the topic's ``forum_topic_created`` message) -> name; the
    # General topic is no thread at all.
    is_forum: bool = False
    topics: dict[int, str] = field(default_factory=dict)

    @property
    def is_group(self) -> bool:
        return self.type in ("group", "supergroup")

    @property
    def bot_present(self) -> bool:
        return self.bot_status in ("creator", "administrator", "member")

    def to_api(self, users: dict[int, User]) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "type": self.type}
        if self.is_group:
            data["title"] = self.title or "Group"
        elif self.user_id is not None:
            user = users[self.user_id]
            data["first_name"] = user.first_name
            if user.last_name:
                data["last_name"] = user.last_name
            if user.username:
                data["username"] = user.username
        else:
            data["first_name"] = self.title or "Chat"
        if self.username and self.is_group:
            data["username"] = self.username
        if self.is_forum:
            data["is_forum"] = True
        return data

    def to_json(self, users: dict[int, User]) -> dict[str, Any]:
        return {
            **self.to_api(users),
            "topics": {str(thread): name for thread, name in self.topics.items()},
            "user_id": self.user_id,
            "peer_ids": list(self.peer_ids) if self.peer_ids else None,
            "members": {str(uid): status for uid, status in self.members.items()},
            "bot_status": self.bot_status,
            "pinned_message_id": self.pinned_message_id,
            "migrated_to": self.migrated_to,
            "messages": [message.to_json(users) for message in self.messages.values()],
            "ephemeral": [message.to_json(users) for message in self.ephemeral_shown.values()],
        }


@dataclass
class Message:
    """A message as it is now (after edits)."""

    chat: Chat
    message_id: int
    date: int
    from_id: int
    text: str | None = None  # plain text, after HTML parsing
    entities: list[dict[str, Any]] = field(default_factory=list)
    source: str | None = None  # the text exactly as sent (e.g. HTML)
    parse_mode: str | None = None
    reply_markup: dict[str, Any] | None = None
    edit_date: int | None = None
    via_bot_id: int | None = None
    inline_message_id: str | None = None
    reply_to: Message | None = None  # in another chat: shown as its external_reply
    quote: dict[str, Any] | None = None  # the part of reply_to it quotes (a TextQuote)
    service: dict[str, Any] = field(default_factory=dict)  # e.g. new_chat_members
    version: int = 0  # the world's version when created or last changed
    created: int = 0  # the world's version when created (a chat's order)
    edits: int = 0
    ephemeral_message_id: int | None = None  # ephemeral: seen by receiver_id only
    receiver_id: int | None = None
    replaces: int | None = None  # ephemeral shown in place of this message_id
    sender_chat_id: int | None = None  # sent on behalf of a chat (an anonymous admin)
    thread_id: int | None = None  # the forum topic it is in (None: General, or no forum)

    @property
    def chat_id(self) -> int:
        return self.chat.id

    @property
    def keyboard(self) -> list[list[dict[str, Any]]]:
        """The inline keyboard's rows of buttons (empty without one)."""
        if not self.reply_markup:
            return []
        rows: list[list[dict[str, Any]]] = self.reply_markup.get("inline_keyboard", [])
        return rows

    @property
    def buttons(self) -> list[dict[str, Any]]:
        return iter_buttons(self.reply_markup)

    @property
    def button_texts(self) -> list[str]:
        return [button["text"] for button in self.buttons]

    def find_button(self, text: str | None = None, data: str | None = None) -> dict[str, Any]:
        """The one button with this text (exact, else substring), or the first
        with this callback data: Telegram lets a keyboard repeat one data on
        several buttons, and a press of any of them sends the same query (#41: a
        replay at its first move has ⏮, ◀ and ⏪ all going to it)."""
        if (text is None) == (data is None):
            raise ValueError("give exactly one of text= or data=")
        if data is not None:
            found = [b for b in self.buttons if b.get("callback_data") == data][:1]
        else:
            found = [b for b in self.buttons if b["text"] == text]
            if not found:
                found = [b for b in self.buttons if text in b["text"]]
        if len(found) != 1:
            what = f"text {text!r}" if text is not None else f"data {data!r}"
            raise LookupError(
                f"{len(found)} buttons with {what} on message {self.message_id} in chat "
                f"{self.chat_id}; buttons: {self.button_texts}"
            )
        return found[0]

    def matches(self, match: MessageMatch) -> bool:
        if isinstance(match, str):
            return self.text is not None and match in self.text
        if isinstance(match, re.Pattern):
            return self.text is not None and match.search(self.text) is not None
        return match(self)

    def to_api(self, users: dict[int, User], *, with_reply: bool = True) -> dict[str, Any]:
        data: dict[str, Any] = {
            "message_id": self.message_id,
            "date": self.date,
            "chat": self.chat.to_api(users),
            "from": users[self.from_id].to_api(),
        }
        if self.ephemeral_message_id is not None and self.receiver_id is not None:
            data["message_id"] = 0  # "0 for ephemeral messages"
            data["ephemeral_message_id"] = self.ephemeral_message_id
            data["receiver_user"] = users[self.receiver_id].to_api()
        if self.text is not None:
            data["text"] = self.text
            if self.entities:
                data["entities"] = self.entities
        if self.reply_markup is not None:
            data["reply_markup"] = self.reply_markup
        if self.edit_date is not None:
            data["edit_date"] = self.edit_date
        if self.sender_chat_id is not None:  # the group itself (its anonymous admin)
            data["sender_chat"] = self.chat.to_api(users)
        if self.via_bot_id is not None:
            data["via_bot"] = users[self.via_bot_id].to_api()
        data.update(self.thread_fields())
        if self.reply_to is not None and with_reply:
            if self.reply_to.chat is self.chat:
                data["reply_to_message"] = self.reply_to.to_api(users, with_reply=False)
            else:  # a reply to a message of another chat (ReplyParameters.chat_id)
                data["external_reply"] = self.reply_to.external_reply(users)
        elif with_reply and (root := self.topic_root()) is not None:
            # as Telegram's: a message in a topic that replies to nothing comes as
            # a reply to the topic's forum_topic_created message
            data["reply_to_message"] = root.to_api(users, with_reply=False)
        if self.quote is not None and with_reply:
            data["quote"] = self.quote
        data.update(self.service)
        return data

    def thread_fields(self) -> dict[str, Any]:
        """``message_thread_id`` and ``is_topic_message`` as Telegram fills them
        (``topics.py``): a topic's message has both; a reply in a supergroup
        outside any topic (General included) carries the id of its reply
        thread's first message without ``is_topic_message`` -- not a topic, so
        a send to that id is "message thread not found" in a forum."""
        if self.thread_id is not None:
            return {"message_thread_id": self.thread_id, "is_topic_message": True}
        root = self.reply_to
        if self.chat.type != "supergroup" or root is None or root.chat is not self.chat:
            return {}
        while root.reply_to is not None and root.reply_to.chat is self.chat:
            root = root.reply_to
        return {"message_thread_id": root.message_id}

    def topic_root(self) -> Message | None:
        """The topic's ``forum_topic_created`` message, for a message in that
        topic other than it (None: in no topic, or the root itself)."""
        if self.thread_id is None or self.thread_id == self.message_id:
            return None
        return self.chat.messages.get(self.thread_id)

    def external_reply(self, users: dict[int, User]) -> dict[str, Any]:
        """This message as another chat's reply shows it (an ExternalReplyInfo):
        its origin -- the chat it was sent on behalf of, or its sender --, its
        chat and id."""
        if self.sender_chat_id is not None:
            origin = {"type": "chat", "date": self.date, "sender_chat": self.chat.to_api(users)}
        else:
            sender = users[self.from_id].to_api()
            origin = {"type": "user", "date": self.date, "sender_user": sender}
        return {"origin": origin, "chat": self.chat.to_api(users), "message_id": self.message_id}

    def to_json(self, users: dict[int, User]) -> dict[str, Any]:
        """For the snapshot: the Bot API form plus what a client shows."""
        replied = self.reply_to if self.reply_to and self.reply_to.chat is self.chat else None
        return {
            **self.to_api(users, with_reply=False),
            "reply_to_message_id": replied.message_id if replied else None,
            "source": self.source,
            "parse_mode": self.parse_mode,
            "inline_message_id": self.inline_message_id,
            "version": self.version,
            "created": self.created,
            "edits": self.edits,
            "replaces_message_id": self.replaces,
        }


@dataclass
class CallbackQuery:
    """A button press; ``answer`` is what answerCallbackQuery told the user."""

    id: str
    user_id: int
    message: Message
    data: str
    pressed_at: float = 0.0  # on the world's clock: the answer window starts here
    answer: dict[str, Any] | None = None
    answered: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def alert(self) -> str | None:
        """The text the user saw (toast or alert), if the bot answered with one."""
        return None if self.answer is None else self.answer.get("text")

    @property
    def show_alert(self) -> bool:
        return bool(self.answer and self.answer.get("show_alert"))

    async def wait_answer(self, timeout: float = 10.0) -> dict[str, Any]:
        """Wait until the bot answered this query (the timeout is only a safety net)."""
        await asyncio.wait_for(self.answered.wait(), timeout)
        assert self.answer is not None
        return self.answer


@dataclass
class InlineQuery:
    """An inline query; ``results`` is what answerInlineQuery returned."""

    id: str
    user_id: int
    query: str
    chat_type: str | None
    results: list[dict[str, Any]] | None = None
    answer: dict[str, Any] | None = None
    answered: asyncio.Event = field(default_factory=asyncio.Event)

    async def wait_results(self, timeout: float = 10.0) -> list[dict[str, Any]]:
        await asyncio.wait_for(self.answered.wait(), timeout)
        assert self.results is not None
        return self.results


@dataclass(frozen=True)
class FeedEvent:
    """One change of the world, for a page that polls or streams (``seq`` = version)."""

    seq: int
    kind: str  # message_new, message_edited, message_deleted, callback_answered, ...
    chat_id: int | None = None
    message_id: int | None = None
    user_id: int | None = None
    detail: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "kind": self.kind,
            "chat_id": self.chat_id,
            "message_id": self.message_id,
            "user_id": self.user_id,
            "detail": self.detail,
        }


def member_json(user: User, status: MemberStatus) -> dict[str, Any]:
    data: dict[str, Any] = {"status": status, "user": user.to_api()}
    if status == "creator":
        data["is_anonymous"] = False
    elif status == "administrator":
        rights = [
            "can_manage_chat",
            "can_delete_messages",
            "can_manage_video_chats",
            "can_restrict_members",
            "can_promote_members",
            "can_change_info",
            "can_invite_users",
            "can_post_stories",
            "can_edit_stories",
            "can_delete_stories",
            "can_send_welcome_messages",
            "can_pin_messages",
        ]
        data.update({"can_be_edited": False, "is_anonymous": False})
        data.update(dict.fromkeys(rights, True))
    elif status == "kicked":
        data["until_date"] = 0
    return data
