"""What one person sees of a chat: its messages plus the ephemeral messages shown
to him (and no one else), each in place of the message it replaced, if any."""

from __future__ import annotations

from sandbox.fake_api.models import Chat, Message


def ephemeral_for(chat: Chat, viewer: int) -> list[Message]:
    """The ephemeral messages ``viewer`` was shown in ``chat`` (as he was shown them)."""
    return [m for m in chat.ephemeral_shown.values() if m.receiver_id == viewer]


def view_of(chat: Chat, viewer: int) -> list[Message]:
    """``chat`` as ``viewer``'s app shows it, oldest first."""
    mine = ephemeral_for(chat, viewer)
    replaced = {m.replaces: m for m in mine if m.replaces is not None}
    ordered: list[tuple[int, Message]] = []
    for message in chat.messages.values():
        if message.message_id not in replaced:
            ordered.append((message.created, message))
    for message in mine:
        original = chat.messages.get(message.replaces or 0)
        ordered.append((original.created if original else message.created, message))
    ordered.sort(key=lambda pair: pair[0])
    return [message for _, message in ordered]


def visible_to(chat: Chat, message: Message, present: tuple[str, ...]) -> list[int]:
    """Who is shown ``message`` now: the receiver of an ephemeral one (if it reached
    him), the owner of a private chat, or every present member of a group."""
    if message.ephemeral_message_id is not None:
        shown = chat.ephemeral_shown.get(message.ephemeral_message_id)
        return [shown.receiver_id] if shown is message and shown.receiver_id else []
    if chat.user_id is not None:
        return [chat.user_id]
    if chat.peer_ids is not None:
        return list(chat.peer_ids)
    return [uid for uid, status in chat.members.items() if status in present]


def check_pressable(message: Message, viewer: int, sees_chat: bool) -> None:
    """Refuse a press on a message ``viewer`` does not have in front of him: a
    deleted one, one in a chat he is not in, someone else's ephemeral message."""
    chat = message.chat
    if message.ephemeral_message_id is not None:
        shown = chat.ephemeral_shown.get(message.ephemeral_message_id)
        if message.receiver_id != viewer:
            raise PermissionError(f"ephemeral message {message.ephemeral_message_id} is not his")
        if shown is not message:
            raise LookupError(f"ephemeral message {message.ephemeral_message_id} is not shown")
        return
    if message.message_id not in chat.messages:
        raise LookupError(f"message {message.message_id} was deleted")
    if not sees_chat:
        raise PermissionError(f"user {viewer} cannot see chat {message.chat_id}")
