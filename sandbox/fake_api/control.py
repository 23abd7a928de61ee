"""JSON actions for a page that plays simulated users (``POST /_fake/act``).

One body per action, e.g. ``{"action": "send", "user_id": 100001, "text": "/new"}``
(``click`` takes ``message_id``, or ``ephemeral_message_id`` for an ephemeral
message; ``set_online`` takes ``online``);
the answer is ``{"ok": true, "result": …, "version": N}`` or ``{"ok": false,
"error": "…"}``. The page follows the results through ``/_fake/events`` and
``/_fake/snapshot``.
"""

from __future__ import annotations

from typing import Any

from sandbox.fake_api.models import CallbackQuery, Chat, InlineQuery, Message
from sandbox.fake_api.users import SimUser
from sandbox.fake_api.web_apps import Launch
from sandbox.fake_api.world import World


class ActionError(ValueError):
    """A page asked for something a user cannot do."""


def _result(world: World, value: object) -> Any:
    if isinstance(value, Message):
        return value.to_json(world.users)
    if isinstance(value, Chat):
        return value.to_json(world.users)
    if isinstance(value, CallbackQuery):
        return {"query_id": value.id, "data": value.data}
    if isinstance(value, InlineQuery):
        return {"query_id": value.id, "query": value.query}
    if isinstance(value, Launch):
        return value.to_json()
    return value


def _chat(world: World, body: dict[str, Any], key: str = "chat_id") -> Chat | None:
    if body.get(key) is None:
        return None
    chat = world.chats.get(int(body[key]))
    if chat is None:
        raise ActionError(f"no chat {body[key]}")
    return chat


def _message(world: World, body: dict[str, Any]) -> Message | None:
    chat = _chat(world, body)
    if chat is not None and body.get("ephemeral_message_id") is not None:
        shown = chat.ephemeral_shown.get(int(body["ephemeral_message_id"]))
        if shown is None:
            raise ActionError(f"no ephemeral message {body['ephemeral_message_id']}")
        return shown
    if chat is None or body.get("message_id") is None:
        return None
    message = chat.messages.get(int(body["message_id"]))
    if message is None:
        raise ActionError(f"no message {body['message_id']} in chat {chat.id}")
    return message


async def perform(world: World, body: dict[str, Any]) -> Any:
    """Do one action; return its JSON result (raises ``ActionError``)."""
    action = body.get("action")
    if action == "add_user":
        user = world.add_user(
            str(body.get("first_name") or "User"),
            username=body.get("username"),
            language_code=body.get("language_code", "en"),
            last_name=body.get("last_name"),
        )
        return user.to_json()
    user_id = body.get("user_id")
    if user_id is None or int(user_id) not in world.users or int(user_id) == world.bot.id:
        raise ActionError(f"no simulated user {user_id}")
    sim = SimUser(world, world.users[int(user_id)])
    chat = _chat(world, body)
    try:
        value = await _user_action(world, sim, str(action), body, chat)
    except (LookupError, PermissionError, ValueError, RuntimeError, NotImplementedError) as exc:
        raise ActionError(str(exc)) from exc
    return _result(world, value)


async def _user_action(
    world: World, sim: SimUser, action: str, body: dict[str, Any], chat: Chat | None
) -> object:
    text = body.get("text")
    match action:
        case "send":
            return sim.send(str(body["text"]), chat)
        case "start":
            return sim.start(body.get("payload") or None)
        case "click":
            return sim.click(
                text,
                data=body.get("data"),
                message=_message(world, body),
                chat=chat,
                into=_chat(world, body, "into_chat_id"),
            )
        case "follow_link":
            return sim.follow_link(str(body["url"]), group=chat)
        case "web_app" | "menu_app" | "direct_link":
            return _open_app(world, sim, action, body, chat).to_json()
        case "inline_query":
            return sim.inline_query(str(body.get("query", "")), chat)
        case "choose_result":
            query = world.inline_queries.get(str(body.get("query_id")))
            if query is None or chat is None:
                raise ActionError("choose_result needs query_id and chat_id")
            return await sim.choose_result(query, chat, body.get("result_id"), timeout=5.0)
        case "create_group" | "direct_chat":
            return _new_chat(world, sim, action, body)
        case "add_bot" | "join" | "leave" | "remove_bot" | "kick_bot" | "promote_bot" | "upgrade":
            if chat is None:
                raise ActionError(f"{action} needs chat_id")
            return _group_action(sim, action, chat)
        case "block" | "unblock" | "set_language" | "set_online":
            _account_action(sim, action, body)
            return True
        case "commands":
            return world.commands_for(sim.user, chat or sim.chat)
    raise ActionError(f"unknown action {action!r}")


def _open_app(
    world: World, sim: SimUser, action: str, body: dict[str, Any], chat: Chat | None
) -> Launch:
    """A Mini App opened (#42): a message's ``web_app`` button (``message_id``,
    its ``text``), the menu button of his chat with the bot, or a direct link
    (``url``) tapped in ``chat_id``; ``theme``: light or dark."""
    theme = str(body.get("theme") or "light")
    if action == "menu_app":
        return sim.open_menu_app(theme)
    if action == "direct_link":
        return sim.open_direct_link(str(body["url"]), chat, theme)
    message = _message(world, body)
    if message is None:
        raise ActionError("web_app needs chat_id and message_id")
    return sim.open_web_app(body.get("text"), message=message, theme=theme)


def _new_chat(world: World, sim: SimUser, action: str, body: dict[str, Any]) -> Chat:
    if action == "create_group":
        others = [SimUser(world, world.users[int(uid)]) for uid in body.get("member_ids", [])]
        return sim.create_group(str(body.get("title") or "Group"), *others)
    other = world.users.get(int(body.get("other_user_id", 0)))
    if other is None:
        raise ActionError("direct_chat needs other_user_id")
    return world.direct_chat(sim.user, other)


def _account_action(sim: SimUser, action: str, body: dict[str, Any]) -> None:
    if action == "block":
        sim.block()
    elif action == "unblock":
        sim.unblock()
    elif action == "set_online":
        sim.set_online(bool(body.get("online", True)))
    else:
        sim.set_language(body.get("language_code") or None)


def _group_action(sim: SimUser, action: str, chat: Chat) -> object:
    if action == "add_bot":
        return sim.add_bot_to(chat)
    if action in ("remove_bot", "kick_bot"):
        return sim.remove_bot_from(chat, kick=action == "kick_bot")
    if action == "upgrade":
        return sim.upgrade_group(chat)
    if action == "join":
        return sim.join(chat)
    if action == "leave":
        return sim.leave(chat)
    sim.promote_bot(chat)
    return True
