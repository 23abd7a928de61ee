"""What the bot receives: which messages Telegram delivers to it (privacy mode in
groups, blocked private chats) and the membership updates it gets."""

from __future__ import annotations

from typing import Any

from sandbox.fake_api.models import Chat, MemberStatus, Message, User, member_json
from sandbox.fake_api.world import World


def bot_sees(world: World, message: Message) -> bool:
    """Whether Telegram delivers ``message`` to the bot (privacy mode in groups)."""
    chat = message.chat
    if chat.user_id is not None:
        return not world.users[chat.user_id].blocked
    if not chat.is_group or not chat.bot_present:
        return False
    if not world.options.privacy_mode or message.service:
        return True
    if message.via_bot_id == world.bot.id:
        return True
    if message.reply_to is not None and message.reply_to.from_id == world.bot.id:
        return True
    text = message.text or ""
    if text.startswith("/"):
        command = text.split(maxsplit=1)[0]
        _, _, mention = command.partition("@")
        return not mention or mention.lower() == (world.bot.username or "").lower()
    return False


def deliver(world: World, message: Message) -> None:
    if bot_sees(world, message):
        world.enqueue("message", message.to_api(world.users))


def member_update(
    world: World, chat: Chat, by: User, member: User, old: MemberStatus, new: MemberStatus
) -> dict[str, Any]:
    return {
        "chat": chat.to_api(world.users),
        "from": by.to_api(),
        "date": world.now(),
        "old_chat_member": member_json(member, old),
        "new_chat_member": member_json(member, new),
    }


def set_bot_status(world: World, chat: Chat, status: MemberStatus, by: User) -> None:
    """The bot's membership of a group changes: a ``my_chat_member`` update."""
    old = chat.bot_status
    chat.bot_status = status
    world.touch("bot_status", chat_id=chat.id, user_id=by.id, detail={"status": status})
    world.enqueue("my_chat_member", member_update(world, chat, by, world.bot, old, status))
