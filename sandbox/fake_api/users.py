"""Simulated users: what a person does in Telegram, turned into updates for the bot.

``SimUser`` is what tests, benchmarks and the sandbox page drive. Actions are
synchronous (they change the world and queue updates); waiting for the bot's
answer is ``await``-ed.
"""

from __future__ import annotations

import re
import secrets
from typing import Any
from urllib.parse import parse_qs, urlsplit

from sandbox.fake_api.account import SimAccount
from sandbox.fake_api.inbox import deliver, member_update, set_bot_status
from sandbox.fake_api.models import (
    CallbackQuery,
    Chat,
    ChatType,
    InlineQuery,
    Message,
    MessageMatch,
)
from sandbox.fake_api.text import callback_data_of, command_entities, parse_text
from sandbox.fake_api.topics import user_thread
from sandbox.fake_api.views import check_pressable
from sandbox.fake_api.web_apps import Launch, direct_link, launch

_PAYLOAD = re.compile(r"^[A-Za-z0-9_-]{0,64}$")


class SimUser(SimAccount):
    """One simulated person. ``acted_at`` is the world's version before his last action."""

    # ------------------------------------------------------------ messages
    def send(
        self,
        text: str,
        chat: Chat | None = None,
        reply_to: Message | None = None,
        *,
        topic: int | None = None,
    ) -> Message:
        """Type ``text`` in a chat (default: his chat with the bot); commands get
        entities.  ``topic``: in that topic of a forum (None: General; a reply
        goes to the replied message's topic)."""
        target = self._chat(chat)
        if not self.can_see(target):
            raise PermissionError(f"{self!r} is not in chat {target.id}")
        if target.user_id is not None:
            if self.user.blocked:
                raise PermissionError(f"{self!r} blocked the bot; unblock() first")
            self.user.started = True
        thread = user_thread(target, topic, reply_to)
        self._act()
        message = self.world.add_message(
            target,
            self.user,
            text=text,
            entities=command_entities(text),
            reply_to=reply_to,
            thread_id=thread,
        )
        deliver(self.world, message)
        return message

    def send_anonymously(self, text: str, group: Chat) -> Message:
        """Type ``text`` in ``group`` as its anonymous admin: Telegram shows the
        group as the sender (``sender_chat``) and ``from`` is the placeholder
        ``@GroupAnonymousBot``.  Only the group's admins may remain anonymous."""
        if group.members.get(self.id) not in ("creator", "administrator"):
            raise PermissionError(f"{self!r} is not an admin of chat {group.id}")
        self._act()
        message = self.world.add_message(
            group,
            self.world.anonymous_admin,
            text=text,
            entities=command_entities(text),
            sender_chat_id=group.id,
        )
        deliver(self.world, message)
        return message

    def start(self, payload: str | None = None) -> Message:
        """Press Start (or open a ``?start=payload`` deep link): ``/start [payload]``."""
        if payload is not None and not _PAYLOAD.match(payload):
            raise ValueError(f"deep-link payload must be 0-64 of A-Za-z0-9_-: {payload!r}")
        if self.user.blocked:
            self.unblock()
        return self.send(f"/start {payload}" if payload else "/start")

    def follow_link(self, url: str, group: Chat | None = None) -> Message:
        """Open a ``t.me/<bot>?start=…`` link, or ``?startgroup=…`` choosing ``group``.
        (A Mini App's direct link: :meth:`open_direct_link`.)"""
        if direct_link(self.world, url) is not None:
            raise ValueError(f"a Mini App's direct link opens the app (open_direct_link): {url}")
        parts = urlsplit(url if "://" in url else f"https://{url}")
        query = parse_qs(parts.query, keep_blank_values=True)
        name = query.get("domain", [""])[0] if parts.scheme == "tg" else parts.path.strip("/")
        if name.lower() != (self.world.bot.username or "").lower():
            raise ValueError(f"not a link to @{self.world.bot.username}: {url}")
        if "startgroup" in query:
            if group is None:
                raise ValueError("a startgroup link needs the group to add the bot to")
            payload = query["startgroup"][0]
            if not group.bot_present:
                self.add_bot_to(group)
            text = f"/start@{self.world.bot.username} {payload}".rstrip()
            return self.send(text, group)
        return self.start(query.get("start", [""])[0] or None)

    # ------------------------------------------------------------ Mini Apps (#42)
    def open_web_app(
        self,
        text: str | None = None,
        *,
        message: Message | None = None,
        chat: Chat | None = None,
        theme: str = "light",
    ) -> Launch:
        """Tap a ``web_app`` button (by its text; default: the newest one in his
        chat with the bot): the app opens with his signed init data."""
        target = message
        if target is None:
            target = next(
                (
                    m
                    for m in reversed(self.world.messages(self._chat(chat), viewer=self.id))
                    if any("web_app" in b and text in (None, b["text"]) for b in m.buttons)
                ),
                None,
            )
            if target is None:
                raise LookupError(f"no message has a web_app button {text!r}")
        check_pressable(target, self.id, self.can_see(target.chat))
        button = next(
            (b for b in target.buttons if "web_app" in b and text in (None, b["text"])), None
        )
        if button is None:
            raise LookupError(f"message {target.message_id} has no web_app button {text!r}")
        return launch(self.world, self.user, str(button["web_app"]["url"]), theme=theme)

    def open_menu_app(self, theme: str = "light") -> Launch:
        """Tap the menu button of his chat with the bot, set to a Mini App."""
        button = self.world.menu_button_for(self.chat)
        if button.get("type") != "web_app":
            raise LookupError(f"the menu button of his chat is not a Mini App: {button}")
        return launch(self.world, self.user, str(button["web_app"]["url"]), theme=theme)

    def open_direct_link(self, url: str, chat: Chat | None = None, theme: str = "light") -> Launch:
        """Open a Mini App's direct link ``t.me/<bot>/<app>?startapp=…`` tapped in
        ``chat`` (default: his chat with the bot): the app opens in place with
        ``start_param``, ``chat_type`` and ``chat_instance`` in its init data."""
        where = self._chat(chat)
        if not self.can_see(where):
            raise PermissionError(f"{self!r} is not in chat {where.id}")
        found = direct_link(self.world, url)
        if found is None:
            raise ValueError(f"not a Mini App's direct link of @{self.world.bot.username}: {url}")
        app_url, param = found
        return launch(self.world, self.user, app_url, chat=where, start_param=param, theme=theme)

    # ------------------------------------------------------------ buttons
    def press(
        self,
        text: str | None = None,
        *,
        data: str | None = None,
        message: Message | None = None,
        chat: Chat | None = None,
        forged: bool = False,
    ) -> CallbackQuery:
        """Press an inline button by its text or callback data.

        Without ``message``: the newest message in ``chat`` (default: his chat
        with the bot) that has such a button. ``forged=True`` sends ``data``
        even though no button carries it (a tampered client).
        """
        target = message or self._find_message_with_button(self._chat(chat), text, data, forged)
        check_pressable(target, self.id, self.can_see(target.chat))
        if forged:
            if data is None:
                raise ValueError("a forged press needs data=")
            payload_data = data
        else:
            payload_data = callback_data_of(target.find_button(text, data))
        self._act()
        world = self.world
        query = CallbackQuery(
            id=world.new_query_id(),
            user_id=self.id,
            message=target,
            data=payload_data,
            pressed_at=world.clock(),
        )
        world.add_query(query)
        payload: dict[str, Any] = {
            "id": query.id,
            "from": self.user.to_api(),
            "chat_instance": world.chat_instance(target.chat),
            "data": payload_data,
        }
        if target.inline_message_id:
            payload["inline_message_id"] = target.inline_message_id
        else:
            payload["message"] = target.to_api(world.users)
        world.touch(
            "callback_query", chat_id=target.chat_id, message_id=target.message_id, user_id=self.id
        )
        world.enqueue("callback_query", payload)
        return query

    def click(
        self,
        text: str | None = None,
        *,
        data: str | None = None,
        message: Message | None = None,
        chat: Chat | None = None,
        into: Chat | None = None,
    ) -> CallbackQuery | Message | InlineQuery | Launch:
        """Tap any button the way an app does.

        A callback button is pressed (``CallbackQuery``); a ``t.me`` link to the
        bot is followed (the ``/start`` ``Message``); a ``web_app`` button or a
        Mini App's direct link opens the app (``Launch``); a ``switch_inline_query``
        button starts an inline query (``InlineQuery``; pick a result with
        ``choose_result``). ``into`` is the chat the user picks when the app asks
        for one (``startgroup`` links, ``switch_inline_query``).
        """
        target = message or self._find_message_with_button(self._chat(chat), text, data, False)
        button = target.find_button(text, data)
        if "callback_data" in button or "disabled" in button:
            return self.press(message=target, data=callback_data_of(button))
        if "web_app" in button:
            return self.open_web_app(button["text"], message=target)
        if "url" in button:
            if direct_link(self.world, button["url"]) is not None:
                return self.open_direct_link(button["url"], target.chat)
            return self.follow_link(button["url"], group=into)
        for key in ("switch_inline_query", "switch_inline_query_chosen_chat"):
            if key in button:
                value = button[key]
                query = value.get("query", "") if isinstance(value, dict) else str(value)
                return self.inline_query(query, into)
        if "switch_inline_query_current_chat" in button:
            return self.inline_query(str(button["switch_inline_query_current_chat"]), target.chat)
        raise ValueError(f"the fake cannot tap a button like {button}")

    def _find_message_with_button(
        self, chat: Chat, text: str | None, data: str | None, forged: bool
    ) -> Message:
        for candidate in reversed(self.world.messages(chat, viewer=self.id)):
            if forged and candidate.from_id == self.world.bot.id:
                return candidate
            try:
                candidate.find_button(text, data)
            except LookupError:
                continue
            return candidate
        raise LookupError(f"no message in chat {chat.id} has a button {text or data!r}")

    # ------------------------------------------------------------ inline mode
    def inline_query(self, query: str = "", chat: Chat | None = None) -> InlineQuery:
        """Type ``@bot query`` in ``chat`` (default: his chat with the bot)."""
        world = self.world
        if not world.options.inline_mode:
            raise RuntimeError("the bot has no inline mode")
        target = self._chat(chat)
        chat_type: str = target.type if target.user_id != self.id else "sender"
        self._act()
        record = InlineQuery(
            id=world.new_query_id(), user_id=self.id, query=query, chat_type=chat_type
        )
        world.add_query(record)
        world.enqueue(
            "inline_query",
            {
                "id": record.id,
                "from": self.user.to_api(),
                "query": query,
                "offset": "",
                "chat_type": chat_type,
            },
        )
        return record

    async def choose_result(
        self,
        query: InlineQuery,
        chat: Chat,
        result_id: str | None = None,
        timeout: float = 10.0,
    ) -> Message:
        """Pick a result (default: the first) of an answered inline query: post it in ``chat``."""
        results = await query.wait_results(timeout)
        chosen = next((r for r in results if result_id in (None, r["id"])), None)
        if chosen is None:
            raise LookupError(f"no inline result {result_id!r} among {[r['id'] for r in results]}")
        content = chosen.get("input_message_content") or {}
        if "message_text" not in content:
            raise NotImplementedError("only results with a text input_message_content")
        if not self.can_see(chat):
            raise PermissionError(f"{self!r} is not in chat {chat.id}")
        self._act()
        world = self.world
        plain, entities = parse_text(str(content["message_text"]), content.get("parse_mode"))
        markup = chosen.get("reply_markup")
        inline_id = secrets.token_urlsafe(18) if markup else None
        message = world.add_message(
            chat,
            self.user,
            text=plain,
            entities=entities,
            source=str(content["message_text"]),
            parse_mode=content.get("parse_mode"),
            reply_markup=markup,
            via_bot_id=world.bot.id,
            inline_message_id=inline_id,
        )
        if inline_id:
            world.inline_messages[inline_id] = message
        deliver(world, message)
        if world.options.inline_feedback:
            chosen_update: dict[str, Any] = {
                "result_id": chosen["id"],
                "from": self.user.to_api(),
                "query": query.query,
            }
            if inline_id:
                chosen_update["inline_message_id"] = inline_id
            world.enqueue("chosen_inline_result", chosen_update)
        return message

    # ------------------------------------------------------------ groups
    def create_group(
        self, title: str, *others: SimUser, chat_type: ChatType = "group", forum: bool = False
    ) -> Chat:
        """A group he creates with ``others`` in it (the bot is not in it yet);
        ``forum``: a supergroup with topics (:meth:`create_topic`)."""
        self._act()
        members = [self.user, *(o.user for o in others)]
        kind: ChatType = "supergroup" if forum else chat_type
        return self.world.create_group(title, members, chat_type=kind, forum=forum)

    def create_topic(self, group: Chat, name: str) -> int:
        """Create a topic in the forum ``group`` (its creator or an admin): the
        ``forum_topic_created`` message, which the bot gets; the topic's thread id."""
        if group.members.get(self.id) not in ("creator", "administrator"):
            raise PermissionError(f"{self!r} may not manage the topics of chat {group.id}")
        self._act()
        message = self.world.create_topic(group, self.user, name)
        deliver(self.world, message)
        assert message.thread_id is not None
        return message.thread_id

    def add_bot_to(self, group: Chat, as_admin: bool = False) -> Message:
        """Add the bot: ``my_chat_member`` plus the ``new_chat_members`` service message."""
        if not self.can_see(group):
            raise PermissionError(f"{self!r} is not in group {group.id}")
        if not self.world.options.can_join_groups:
            raise PermissionError("the bot cannot be added to groups")
        self._act()
        world = self.world
        set_bot_status(world, group, "administrator" if as_admin else "member", by=self.user)
        message = world.add_message(
            group, self.user, service={"new_chat_members": [world.bot.to_api()]}
        )
        deliver(world, message)
        return message

    def remove_bot_from(self, group: Chat, *, kick: bool = False) -> Message:
        """Remove the bot (``kick``: ban it): ``my_chat_member`` with the new
        status ``left`` (``kicked``), and the ``left_chat_member`` service
        message, which the bot, no longer there, does not get."""
        self._act()
        world = self.world
        set_bot_status(world, group, "kicked" if kick else "left", by=self.user)
        return world.add_message(group, self.user, service={"left_chat_member": world.bot.to_api()})

    def upgrade_group(self, group: Chat) -> Chat:
        """Make a basic group a supergroup (an admin's act; Telegram does it too
        when a group needs a supergroup's feature): the new chat, under a new id.
        The bot gets what Telegram sends: the service message with
        ``migrate_to_chat_id`` in the old group (from him), a ``my_chat_member``
        of the supergroup (left -> its status there; none leaving the old
        group), and the supergroup's first message, ``migrate_from_chat_id``
        (from ``@GroupAnonymousBot`` on behalf of the supergroup).  The old id
        answers 400 with ``parameters.migrate_to_chat_id`` from now on."""
        if group.members.get(self.id) not in ("creator", "administrator"):
            raise PermissionError(f"{self!r} is not an admin of chat {group.id}")
        self._act()
        world = self.world
        new = world.upgrade_group(group)
        deliver(world, world.add_message(group, self.user, service={"migrate_to_chat_id": new.id}))
        if new.bot_present:
            world.enqueue(
                "my_chat_member",
                member_update(world, new, self.user, world.bot, "left", new.bot_status),
            )
        moved = world.add_message(
            new,
            world.anonymous_admin,
            service={"migrate_from_chat_id": group.id},
            sender_chat_id=new.id,
        )
        deliver(world, moved)
        return new

    def promote_bot(self, group: Chat) -> None:
        """Make the bot an administrator of the group (it may then pin and delete)."""
        self._act()
        set_bot_status(self.world, group, "administrator", by=self.user)

    def join(self, group: Chat) -> Message:
        """Join a group: the ``new_chat_members`` service message."""
        self._act()
        world = self.world
        old = group.members.get(self.id, "left")
        group.members[self.id] = "member"
        message = world.add_message(
            group, self.user, service={"new_chat_members": [self.user.to_api()]}
        )
        deliver(world, message)
        if group.bot_status == "administrator":
            world.enqueue(
                "chat_member", member_update(world, group, self.user, self.user, old, "member")
            )
        return message

    def leave(self, group: Chat) -> Message:
        self._act()
        world = self.world
        group.members[self.id] = "left"
        message = world.add_message(
            group, self.user, service={"left_chat_member": self.user.to_api()}
        )
        deliver(world, message)
        if group.bot_status == "administrator":
            world.enqueue(
                "chat_member", member_update(world, group, self.user, self.user, "member", "left")
            )
        return message

    # ------------------------------------------------------------ reading
    def messages(self, chat: Chat | None = None) -> list[Message]:
        """The chat as his app shows it (his ephemeral messages included)."""
        return self.world.messages(self._chat(chat), viewer=self.id)

    def last_message(self, chat: Chat | None = None) -> Message | None:
        """The bot's newest message in the chat that he sees."""
        return self.world.last_message(self._chat(chat), viewer=self.id)

    async def wait_message(
        self,
        match: MessageMatch | None = None,
        chat: Chat | None = None,
        *,
        since: int | None = None,
        timeout: float = 10.0,
    ) -> Message:
        """The bot's newest message he sees matching ``match``, sent or edited after
        his last action (an ephemeral message to someone else never matches)."""
        return await self.world.wait_message(
            self._chat(chat),
            match,
            since=self.acted_at if since is None else since,
            timeout=timeout,
            viewer=self.id,
        )
