"""Bot API methods about the bot itself, updates, webhooks, commands and chats."""

from __future__ import annotations

import asyncio
import contextlib
import re
from typing import Any
from urllib.parse import urlsplit

from sandbox.fake_api.access import resolve_chat
from sandbox.fake_api.errors import BotApiError
from sandbox.fake_api.inbox import set_bot_status
from sandbox.fake_api.models import Chat, MemberStatus, member_json
from sandbox.fake_api.params import CallParams
from sandbox.fake_api.registry import method
from sandbox.fake_api.text import check_web_app_url
from sandbox.fake_api.world import DEFAULT_UPDATE_TYPES, World

_COMMAND = re.compile(r"^[a-z0-9_]{1,32}$")
_LOOPBACK = ("127.0.0.1", "localhost", "::1")


@method("getMe")
async def get_me(world: World, p: CallParams) -> Any:
    o = world.options
    return {
        **world.bot.to_api(),
        "can_join_groups": o.can_join_groups,
        "can_read_all_group_messages": not o.privacy_mode,
        "supports_inline_queries": o.inline_mode,
        "can_connect_to_business": False,
        "has_main_web_app": False,
    }


@method("logOut")
@method("close")
async def log_out(world: World, p: CallParams) -> Any:
    return True


def _set_allowed_updates(world: World, p: CallParams) -> None:
    allowed = p.json("allowed_updates")
    if isinstance(allowed, list):
        world.allowed_updates = frozenset(map(str, allowed)) or DEFAULT_UPDATE_TYPES


@method("getUpdates")
async def get_updates(world: World, p: CallParams) -> Any:
    if world.webhook.get("url"):
        raise BotApiError(
            409,
            "Conflict: can't use getUpdates method while webhook is active; "
            "use deleteWebhook to delete the webhook first",
        )
    offset = p.integer("offset")
    if offset is not None:
        world.confirm_updates(offset)
    limit = min(100, max(1, p.integer("limit", 100) or 100))
    timeout = max(0, p.integer("timeout", 0) or 0)
    _set_allowed_updates(world, p)
    world.poll_generation += 1
    generation = world.poll_generation
    world.wake_pollers()  # an older long poll still waiting ends with 409
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        changed = world.updates_event()
        if world.poll_generation != generation:
            raise BotApiError(
                409,
                "Conflict: terminated by other getUpdates request; "
                "make sure that only one bot instance is running",
            )
        remaining = deadline - loop.time()
        if world.updates or world.closing or remaining <= 0:
            return list(world.updates)[:limit]
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(changed.wait(), remaining)


@method("setWebhook")
async def set_webhook(world: World, p: CallParams) -> Any:
    url = p.string("url") or ""
    if not url:
        world.webhook = {}
        return True
    parts = urlsplit(url)
    if parts.scheme != "https" and not (parts.scheme == "http" and parts.hostname in _LOOPBACK):
        raise BotApiError(
            400, "Bad Request: bad webhook: An HTTPS URL must be provided for webhook"
        )
    secret = p.string("secret_token")
    if secret is not None and not re.fullmatch(r"[A-Za-z0-9_-]{1,256}", secret):
        raise BotApiError(400, "Bad Request: secret token contains unallowed characters")
    if p.boolean("drop_pending_updates"):
        world.updates.clear()
    _set_allowed_updates(world, p)
    world.webhook = {
        "url": url,
        "secret_token": secret,
        "max_connections": p.integer("max_connections", 40),
        "ip_address": p.string("ip_address"),
    }
    world.touch("webhook_set", detail={"url": url})
    world.wake_pollers()
    return True


@method("deleteWebhook")
async def delete_webhook(world: World, p: CallParams) -> Any:
    if p.boolean("drop_pending_updates"):
        world.updates.clear()
    if world.webhook:
        world.webhook = {}
        world.touch("webhook_deleted")
    return True


@method("getWebhookInfo")
async def get_webhook_info(world: World, p: CallParams) -> Any:
    info: dict[str, Any] = {
        "url": world.webhook.get("url", ""),
        "has_custom_certificate": False,
        "pending_update_count": len(world.updates),
    }
    if world.webhook:
        info["max_connections"] = world.webhook.get("max_connections") or 40
        info["allowed_updates"] = sorted(world.allowed_updates)
        if world.webhook.get("last_error_message"):
            info["last_error_date"] = world.webhook["last_error_date"]
            info["last_error_message"] = world.webhook["last_error_message"]
    return info


# ---------------------------------------------------------------- commands
def _scope_key(world: World, p: CallParams) -> str:
    scope = p.json("scope") or {"type": "default"}
    if not isinstance(scope, dict):
        raise BotApiError(400, "Bad Request: can't parse BotCommandScope JSON object")
    kind = scope.get("type")
    if kind in ("default", "all_private_chats", "all_group_chats", "all_chat_administrators"):
        return str(kind)
    if kind in ("chat", "chat_administrators", "chat_member"):
        chat_ref = scope.get("chat_id")
        if chat_ref is None:
            raise BotApiError(400, "Bad Request: chat_id is empty")
        chat = resolve_chat(world, chat_ref if isinstance(chat_ref, str) else int(chat_ref))
        if kind == "chat_member":
            return f"chat_member:{chat.id}:{int(scope.get('user_id', 0))}"
        return f"{kind}:{chat.id}"
    raise BotApiError(400, "Bad Request: wrong BotCommandScope type specified")


def _language(p: CallParams) -> str:
    language = p.string("language_code") or ""
    if language and not re.fullmatch(r"[a-z]{2}", language):
        raise BotApiError(400, "Bad Request: invalid language code specified")
    return language


@method("setMyCommands")
async def set_my_commands(world: World, p: CallParams) -> Any:
    commands = p.json("commands")
    if not isinstance(commands, list) or len(commands) > 100:
        raise BotApiError(400, "Bad Request: commands must be an array of at most 100 commands")
    clean: list[dict[str, str]] = []
    for item in commands:
        if not isinstance(item, dict) or not _COMMAND.match(str(item.get("command", ""))):
            raise BotApiError(400, "Bad Request: BOT_COMMAND_INVALID")
        description = str(item.get("description", ""))
        if not 1 <= len(description) <= 256:
            raise BotApiError(400, "Bad Request: BOT_COMMAND_DESCRIPTION_INVALID")
        clean.append({"command": str(item["command"]), "description": description})
    key = (_scope_key(world, p), _language(p))
    if clean:
        world.commands[key] = clean
    else:
        world.commands.pop(key, None)
    world.touch("commands_set", detail={"scope": key[0], "language_code": key[1]})
    return True


@method("getMyCommands")
async def get_my_commands(world: World, p: CallParams) -> Any:
    return world.commands.get((_scope_key(world, p), _language(p)), [])


@method("deleteMyCommands")
async def delete_my_commands(world: World, p: CallParams) -> Any:
    world.commands.pop((_scope_key(world, p), _language(p)), None)
    world.touch("commands_set")
    return True


# ---------------------------------------------------------------- chats
def status_in(world: World, chat: Chat, user_id: int) -> MemberStatus:
    if user_id == world.bot.id:
        return chat.bot_status if chat.is_group else "member"
    if chat.is_group:
        return chat.members.get(user_id, "left")
    if chat.user_id == user_id:
        return "kicked" if world.users[user_id].blocked else "member"
    raise BotApiError(400, "Bad Request: user not found")


@method("getChatMember")
async def get_chat_member(world: World, p: CallParams) -> Any:
    chat = resolve_chat(world, p.chat_id())
    user = world.users.get(p.req_integer("user_id"))
    if user is None:
        raise BotApiError(400, "Bad Request: user not found")
    return member_json(user, status_in(world, chat, user.id))


@method("getChatAdministrators")
async def get_chat_administrators(world: World, p: CallParams) -> Any:
    chat = resolve_chat(world, p.chat_id())
    admins = [
        (world.users[uid], s)
        for uid, s in chat.members.items()
        if s in ("creator", "administrator")
    ]
    if chat.bot_status == "administrator":
        admins.append((world.bot, "administrator"))
    return [member_json(user, status) for user, status in admins]


@method("getChatMemberCount")
async def get_chat_member_count(world: World, p: CallParams) -> Any:
    chat = resolve_chat(world, p.chat_id())
    if not chat.is_group:
        return 2
    present = ("creator", "administrator", "member", "restricted")
    return sum(s in present for s in chat.members.values()) + int(chat.bot_present)


@method("getChat")
async def get_chat(world: World, p: CallParams) -> Any:
    chat = resolve_chat(world, p.chat_id())
    if chat.is_group and not chat.bot_present:
        raise BotApiError(400, "Bad Request: chat not found")
    data = {
        **chat.to_api(world.users),
        "accent_color_id": 0,
        "max_reaction_count": 11,
        "accepted_gift_types": dict.fromkeys(
            (
                "unlimited_gifts",
                "limited_gifts",
                "unique_gifts",
                "premium_subscription",
                "gifts_from_channels",
            ),
            False,
        ),
    }
    if chat.pinned_message_id in chat.messages:
        data["pinned_message"] = chat.messages[chat.pinned_message_id].to_api(world.users)
    return data


@method("leaveChat")
async def leave_chat(world: World, p: CallParams) -> Any:
    chat = resolve_chat(world, p.chat_id())
    if not chat.is_group or not chat.bot_present:
        raise BotApiError(400, "Bad Request: chat not found")
    set_bot_status(world, chat, "left", by=world.bot)
    return True


# ---------------------------------------------------------------- settings
def _store(key: str, *fields: str) -> None:
    async def setter(world: World, p: CallParams) -> Any:
        language = _language(p)
        world.bot_settings[f"{key}:{language}"] = {name: p.string(name) or "" for name in fields}
        world.touch("bot_settings", detail={"key": key})
        return True

    async def getter(world: World, p: CallParams) -> Any:
        stored = world.bot_settings.get(f"{key}:{_language(p)}")
        return stored or dict.fromkeys(fields, "")

    method(f"setMy{key}")(setter)
    method(f"getMy{key}")(getter)


_store("Name", "name")
_store("Description", "description")
_store("ShortDescription", "short_description")


# ---------------------------------------------------------------- menu button
def _menu_chat(world: World, p: CallParams) -> int | None:
    """The private chat a menu-button call names; None: the bot's default."""
    if "chat_id" not in p:
        return None
    chat = resolve_chat(world, p.chat_id())
    if chat.is_group:  # "Unique identifier for the target private chat"
        raise BotApiError(400, "Bad Request: chat_id must be a private chat")
    return chat.id


def _menu_button(raw: Any) -> dict[str, Any]:
    """A MenuButton as the docs describe it: ``commands``, ``default``, or
    ``web_app`` with a ``text`` and an HTTPS ``web_app.url`` (HTTP on loopback:
    the sandbox's own Mini App, #42)."""
    if raw is None:
        return {"type": "default"}  # "If not specified, default bot's menu button"
    if not isinstance(raw, dict) or raw.get("type") not in ("commands", "default", "web_app"):
        raise BotApiError(400, "Bad Request: can't parse menu button JSON object")
    if raw["type"] != "web_app":
        return {"type": raw["type"]}
    text, app = raw.get("text"), raw.get("web_app")
    if not isinstance(text, str) or not text.strip():
        raise BotApiError(400, "Bad Request: BUTTON_TEXT_INVALID")
    if not isinstance(app, dict) or not check_web_app_url(app.get("url")):
        raise BotApiError(400, "Bad Request: BUTTON_URL_INVALID")
    return {"type": "web_app", "text": text, "web_app": {"url": app["url"]}}


@method("setChatMenuButton")
async def set_chat_menu_button(world: World, p: CallParams) -> Any:
    chat_id = _menu_chat(world, p)
    button = _menu_button(p.json("menu_button"))
    if chat_id is not None and button["type"] == "default":
        world.menu_buttons.pop(chat_id, None)  # back to the bot's default
    else:
        world.menu_buttons[chat_id] = button
    world.touch("menu_button", detail={"chat_id": chat_id, "type": button["type"]})
    return True


@method("getChatMenuButton")
async def get_chat_menu_button(world: World, p: CallParams) -> Any:
    """A chat's own button, ``default`` when it has none; without a chat, the
    bot's default (``commands`` until one is set)."""
    chat_id = _menu_chat(world, p)
    if chat_id is None:
        return world.menu_buttons.get(None, {"type": "commands"})
    return world.menu_buttons.get(chat_id, {"type": "default"})
