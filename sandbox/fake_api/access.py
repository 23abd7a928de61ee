"""Who the bot may write to, and the flood limits, with Telegram's error texts."""

from __future__ import annotations

from sandbox.fake_api.errors import BotApiError, too_many_requests, upgraded
from sandbox.fake_api.models import Chat
from sandbox.fake_api.world import World

CHAT_NOT_FOUND = "Bad Request: chat not found"


def resolve_chat(world: World, chat_id: int | str) -> Chat:
    """The chat a ``chat_id`` names (an id, or a public group's ``@username``)."""
    if isinstance(chat_id, str):
        name = chat_id.removeprefix("@").lower()
        for chat in world.chats.values():
            if chat.is_group and chat.username and chat.username.lower() == name:
                return chat
        raise BotApiError(400, CHAT_NOT_FOUND)
    found = world.chats.get(chat_id)
    if found is None:
        user = world.users.get(chat_id)
        if user is None or user.is_bot:
            raise BotApiError(400, CHAT_NOT_FOUND)
        found = world.private_chat(user)
    chat = found
    if chat.peer_ids is not None:  # two users' own chat: the bot has no access
        raise BotApiError(400, CHAT_NOT_FOUND)
    if chat.migrated_to is not None:  # the group lives on as a supergroup
        raise upgraded(chat.migrated_to)
    return chat


def check_can_write(world: World, chat: Chat) -> None:
    """403 as Telegram answers it when the bot may not post in ``chat``."""
    if chat.user_id is not None:
        user = world.users[chat.user_id]
        if user.deactivated:
            raise BotApiError(403, "Forbidden: user is deactivated")
        if user.blocked:
            raise BotApiError(403, "Forbidden: bot was blocked by the user")
        if not user.started:
            raise BotApiError(403, "Forbidden: bot can't initiate conversation with a user")
        return
    if chat.is_group and not chat.bot_present:
        kind = "supergroup" if chat.type == "supergroup" else "group"
        if chat.bot_status == "kicked":
            raise BotApiError(403, f"Forbidden: bot was kicked from the {kind} chat")
        raise BotApiError(403, f"Forbidden: bot is not a member of the {kind} chat")


def check_rate(world: World, chat: Chat, receiver: int | None = None) -> None:
    """Take one message's worth of the flood limits, or answer 429 (``receiver``:
    an ephemeral message's; the 429 is counted per chat either way)."""
    retry_after = world.limiter.acquire(chat.id, chat.is_group, receiver)
    if retry_after:
        world.stats.retry_after_by_chat[chat.id] += 1
        world.stats.refusals.append(world.limiter.last_refusal)
        world.stats.refused_at.append(float(world.clock()))
        raise too_many_requests(retry_after)


def bot_is_admin(chat: Chat) -> bool:
    return chat.bot_status in ("creator", "administrator")
