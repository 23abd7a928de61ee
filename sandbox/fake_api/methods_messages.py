"""Bot API methods about messages: send, edit, delete, pin, chat actions."""

from __future__ import annotations

from typing import Any

from sandbox.fake_api.access import bot_is_admin, check_can_write, check_rate, resolve_chat
from sandbox.fake_api.errors import BotApiError
from sandbox.fake_api.models import Chat, Message
from sandbox.fake_api.params import CallParams
from sandbox.fake_api.registry import method
from sandbox.fake_api.text import (
    check_entities,
    check_private_only,
    check_text,
    parse_reply_markup,
    parse_text,
    utf16_len,
)
from sandbox.fake_api.topics import send_thread
from sandbox.fake_api.world import World

NOT_MODIFIED = (
    "Bad Request: message is not modified: specified new message content and reply markup "
    "are exactly the same as a current content and reply markup of the message"
)
CHAT_ACTIONS = frozenset(
    {
        "typing",
        "upload_photo",
        "record_video",
        "upload_video",
        "record_voice",
        "upload_voice",
        "upload_document",
        "choose_sticker",
        "find_location",
        "record_video_note",
        "upload_video_note",
    }
)


def message_text(p: CallParams, name: str = "text") -> dict[str, Any]:
    """text/entities/source/parse_mode fields of a Message from a call's parameters."""
    raw = p.string(name)
    if raw is None:
        raise BotApiError(400, "Bad Request: message text is empty")
    parse_mode = p.string("parse_mode") or None
    given = p.json("entities")
    if isinstance(given, list):
        plain, entities = raw, check_entities(given)
    else:
        plain, entities = parse_text(raw, parse_mode)
    check_text(plain)
    return {"text": plain, "entities": entities, "source": raw, "parse_mode": parse_mode}


def reply_target(
    world: World, p: CallParams, chat: Chat, *, ephemeral: bool = False
) -> tuple[Message | None, dict[str, Any] | None]:
    """The message ``reply_parameters`` (or the older ``reply_to_message_id``)
    names, and the reply's ``quote`` (None without one), as the Bot API documents
    ReplyParameters: ``message_id`` in this chat, or in the chat ``chat_id``
    names (an id or a ``@username``) when that is another one -- then
    ``allow_sending_without_reply`` is always false, as it is for an ephemeral
    message, which may not reply in another chat at all (the fake's words for
    that refusal are its own: the docs give none).  ``quote`` must be an exact
    substring of the replied message's text (at ``quote_position``, in UTF-16
    code units, when given), else ``QUOTE_TEXT_INVALID``; ignored for an
    ephemeral message.  ``ephemeral_message_id`` names an incoming ephemeral
    message, which the fake never has (users send none): always "not found"."""
    reply = p.json("reply_parameters")
    if isinstance(reply, dict) and reply.get("ephemeral_message_id") is not None:
        raise BotApiError(400, "Bad Request: message to be replied not found")
    source = chat
    if isinstance(reply, dict):
        message_id, lenient = (
            reply.get("message_id"),
            bool(reply.get("allow_sending_without_reply")),
        )
        if reply.get("chat_id") not in (None, ""):
            source = resolve_chat(world, _chat_ref(reply["chat_id"]))
    else:
        message_id, lenient = (
            p.integer("reply_to_message_id"),
            p.boolean("allow_sending_without_reply"),
        )
    if source is not chat:
        if ephemeral:
            raise BotApiError(400, "Bad Request: ephemeral messages can't reply in another chat")
        lenient = False  # "always False for replies in another chat"
    if ephemeral:
        lenient = False  # "... and sent ephemeral messages"
    if message_id is None:
        return None, None
    try:
        found = source.messages.get(int(message_id))
    except (TypeError, ValueError):
        raise BotApiError(400, "Bad Request: message to be replied not found") from None
    if found is None and not lenient:
        raise BotApiError(400, "Bad Request: message to be replied not found")
    if found is None or not isinstance(reply, dict) or ephemeral:
        return found, None
    return found, reply_quote(found, reply)


def _chat_ref(value: object) -> int | str:
    """ReplyParameters.chat_id: an id (a number, or digits) or ``@username``."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    text = str(value)
    try:
        return int(text)
    except ValueError:
        return text


def reply_quote(replied: Message, reply: dict[str, Any]) -> dict[str, Any] | None:
    """The ``quote`` (a TextQuote) of a reply whose ``reply_parameters`` quote
    ``replied`` -- its text parsed with ``quote_parse_mode`` (``quote_entities``
    are taken as given) -- or None without one; ``QUOTE_TEXT_INVALID`` when it
    is not in the replied message's text at ``quote_position`` (when given)."""
    raw = reply.get("quote")
    if not raw:
        return None
    given = reply.get("quote_entities")
    if isinstance(given, list):
        text, entities = str(raw), check_entities(given)
    else:
        text, entities = parse_text(str(raw), reply.get("quote_parse_mode"))
    whole = replied.text or ""
    at = _utf16_index(whole, text)
    position = reply.get("quote_position")
    if position is not None and (isinstance(position, bool) or not isinstance(position, int)):
        raise BotApiError(400, 'Bad Request: field "quote_position" must be a Number')
    if at is None or (position is not None and not _quoted_at(whole, text, position)):
        raise BotApiError(400, "Bad Request: QUOTE_TEXT_INVALID")
    quote: dict[str, Any] = {
        "text": text,
        "position": position if position is not None else at,
        "is_manual": True,  # chosen by the sender (the bot), not added by Telegram
    }
    if entities:
        quote["entities"] = entities
    return quote


def _utf16_index(whole: str, part: str) -> int | None:
    index = whole.find(part)
    return None if index < 0 else utf16_len(whole[:index])


def _quoted_at(whole: str, part: str, position: int) -> bool:
    units = whole.encode("utf-16-le")
    start = position * 2
    return units[start : start + len(part.encode("utf-16-le"))] == part.encode("utf-16-le")


async def send_message(world: World, p: CallParams) -> Any:
    """sendMessage without ephemeral parameters (the method itself is registered
    in ``methods_ephemeral``, which sends ephemeral messages)."""
    chat = resolve_chat(world, p.chat_id())
    check_can_write(world, chat)
    fields = message_text(p)
    markup = parse_reply_markup(p.raw.get("reply_markup"))
    check_private_only(markup, private=not chat.is_group)
    reply_to, quote = reply_target(world, p, chat)
    thread = send_thread(p, chat, reply_to)
    check_rate(world, chat)
    message = world.add_message(
        chat,
        world.bot,
        reply_markup=markup,
        reply_to=reply_to,
        quote=quote,
        thread_id=thread,
        **fields,
    )
    world.record_outgoing(message, "send")
    return message.to_api(world.users)


def _edit_target(world: World, p: CallParams) -> tuple[Message, bool]:
    """The message an edit names, and whether it was named by ``inline_message_id``."""
    inline_id = p.string("inline_message_id")
    if inline_id:
        found = world.inline_messages.get(inline_id)
        if found is None or found.message_id not in found.chat.messages:
            raise BotApiError(400, "Bad Request: MESSAGE_ID_INVALID")
        return found, True
    chat = resolve_chat(world, p.chat_id())
    check_can_write(world, chat)
    message_id = p.integer("message_id")
    if message_id is None:
        raise BotApiError(400, "Bad Request: message identifier is not specified")
    message = chat.messages.get(message_id)
    if message is None:
        raise BotApiError(400, "Bad Request: message to edit not found")
    if message.from_id != world.bot.id or message.text is None:
        raise BotApiError(400, "Bad Request: message can't be edited")
    return message, False


def _apply_edit(world: World, message: Message, inline: bool, **changes: Any) -> Any:
    current = {name: getattr(message, name) for name in changes}
    compared = ("text", "entities", "reply_markup")
    if all(changes[k] == current[k] for k in compared if k in changes):
        world.stats.not_modified += 1
        raise BotApiError(400, NOT_MODIFIED)
    check_rate(world, message.chat)
    for name, value in changes.items():
        setattr(message, name, value)
    message.edit_date = world.now()
    message.edits += 1
    world.message_changed(message)
    world.record_outgoing(message, "edit")
    return True if inline else message.to_api(world.users)


@method("editMessageText")
async def edit_message_text(world: World, p: CallParams) -> Any:
    message, inline = _edit_target(world, p)
    fields = message_text(p)
    # Like Telegram: an edit without reply_markup removes the inline keyboard.
    markup = parse_reply_markup(p.raw.get("reply_markup"))
    check_private_only(markup, private=not (inline or message.chat.is_group))
    return _apply_edit(world, message, inline, reply_markup=markup, **fields)


@method("editMessageReplyMarkup")
async def edit_message_reply_markup(world: World, p: CallParams) -> Any:
    message, inline = _edit_target(world, p)
    markup = parse_reply_markup(p.raw.get("reply_markup"))
    check_private_only(markup, private=not (inline or message.chat.is_group))
    return _apply_edit(world, message, inline, reply_markup=markup)


def _delete(world: World, chat: Chat, message_id: int) -> bool:
    message = chat.messages.get(message_id)
    if message is None:
        return False
    own = message.from_id == world.bot.id
    if chat.is_group and not own and not bot_is_admin(chat):
        raise BotApiError(400, "Bad Request: message can't be deleted")
    del chat.messages[message_id]
    if message.inline_message_id:
        world.inline_messages.pop(message.inline_message_id, None)
    world.touch("message_deleted", chat_id=chat.id, message_id=message_id)
    return True


@method("deleteMessage")
async def delete_message(world: World, p: CallParams) -> Any:
    chat = resolve_chat(world, p.chat_id())
    if not _delete(world, chat, p.req_integer("message_id")):
        raise BotApiError(400, "Bad Request: message to delete not found")
    return True


@method("deleteMessages")
async def delete_messages(world: World, p: CallParams) -> Any:
    chat = resolve_chat(world, p.chat_id())
    ids = p.json("message_ids")
    if not isinstance(ids, list) or not 1 <= len(ids) <= 100:
        raise BotApiError(400, "Bad Request: message_ids must be an array of 1-100 identifiers")
    for message_id in ids:
        _delete(world, chat, int(message_id))
    return True


@method("sendChatAction")
async def send_chat_action(world: World, p: CallParams) -> Any:
    chat = resolve_chat(world, p.chat_id())
    check_can_write(world, chat)
    action = p.string("action")
    if action not in CHAT_ACTIONS:
        raise BotApiError(400, "Bad Request: wrong parameter action in request")
    world.touch("chat_action", chat_id=chat.id, detail={"action": action})
    return True


@method("pinChatMessage")
async def pin_chat_message(world: World, p: CallParams) -> Any:
    chat = resolve_chat(world, p.chat_id())
    check_can_write(world, chat)
    if chat.is_group and not bot_is_admin(chat):
        raise BotApiError(
            400, "Bad Request: not enough rights to manage pinned messages in the chat"
        )
    message_id = p.req_integer("message_id")
    if message_id not in chat.messages:
        raise BotApiError(400, "Bad Request: message to pin not found")
    chat.pinned_message_id = message_id
    world.touch("message_pinned", chat_id=chat.id, message_id=message_id)
    return True


@method("unpinChatMessage")
async def unpin_chat_message(world: World, p: CallParams) -> Any:
    chat = resolve_chat(world, p.chat_id())
    if chat.is_group and not bot_is_admin(chat):
        raise BotApiError(
            400, "Bad Request: not enough rights to manage pinned messages in the chat"
        )
    message_id = p.integer("message_id")
    if message_id is None or chat.pinned_message_id == message_id:
        chat.pinned_message_id = None
        world.touch("message_unpinned", chat_id=chat.id, message_id=message_id)
    return True
