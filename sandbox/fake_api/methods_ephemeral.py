"""Ephemeral messages (Bot API 10.2): a bot's message in a group that only one
member, its receiver, sees. ``sendMessage`` with ``ephemeral_message_parameters``
sends one, ``editEphemeralMessageText`` / ``editEphemeralMessageReplyMarkup`` edit
it and ``deleteEphemeralMessage`` deletes it.

What the fake does, and what it chose where the Bot API text leaves room (the
strict reading each time):

- Only in groups and supergroups ("for group and supergroup chats only"); the
  receiver must be a present member (else ``USER_NOT_PARTICIPANT``);
  ``receiver_user_id`` is required (the aiogram 3.31 type requires it). The
  deprecated top-level ``receiver_user_id`` / ``callback_query_id`` of sendMessage
  are accepted when ``ephemeral_message_parameters`` is absent.
- ``callback_query_id`` must name a callback query, still inside its answer
  window, that the receiver sent from a message in this chat.
  ``replace_callback_query_message`` needs ``callback_query_id`` and must be false
  for a query from an ephemeral message (the docs: edit that one instead); when
  true the receiver sees the ephemeral message in place of the message he pressed
  (the others still see that message); deleting the ephemeral one brings it back.
- The result is a Message with ``message_id`` 0, ``ephemeral_message_id`` (counted
  per chat, never reused) and ``receiver_user``. A press on one of its buttons is a
  callback query whose ``message`` is that ephemeral Message (``message_id`` 0),
  sent only when its receiver presses it.
- ``login_url`` buttons are refused (``BUTTON_TYPE_INVALID``: "not supported for
  ephemeral messages"). An ephemeral message may reply to a message of the chat
  (never of another chat: ``reply_parameters.chat_id`` naming one is refused,
  in words of the fake's own; its ``quote`` is ignored, as the docs say);
  ``reply_parameters.ephemeral_message_id`` (a reply to a user's incoming
  ephemeral message) is always "not found": simulated users send none. Ephemeral
  messages do not expire here.
- In a forum, ``message_thread_id`` puts it in that topic, as a public message
  (``topics.py``; sendMessage takes it, and the MTProto ephemeral message has
  its topic); the receiver sees it there.
- Delivery: the docs say delivery "is not guaranteed, especially if they are
  offline". The fake makes it explicit: the call succeeds as usual, and while the
  receiver is offline (``SimUser.set_online(False)``) nothing reaches him - not
  the message, not an edit, not a deletion; his app keeps what it had.
- Flood limits: the docs say nothing, so the fake plays either Telegram (#24,
  ``RateLimits.ephemeral_counted``, :mod:`sandbox.fake_api.limits`): by default
  it counts every ephemeral send and edit like a message in that group
  (``access.check_rate``), the safe assumption for a bot; with
  ``ephemeral_counted=False`` (``FAKE_EPHEMERAL_COUNTED=0``) like a message to
  its receiver alone -- his own per-chat window in that group and the bot's
  overall one, not the group's. The same 429 either way; deletions are free, as
  deleteMessage is.
"""

from __future__ import annotations

from typing import Any

from sandbox.fake_api.access import check_can_write, check_rate, resolve_chat
from sandbox.fake_api.errors import BotApiError
from sandbox.fake_api.methods_messages import NOT_MODIFIED, message_text, reply_target
from sandbox.fake_api.methods_messages import send_message as send_public
from sandbox.fake_api.methods_queries import QUERY_INVALID
from sandbox.fake_api.models import CallbackQuery, Chat, Message
from sandbox.fake_api.params import CallParams
from sandbox.fake_api.registry import method
from sandbox.fake_api.text import check_private_only, iter_buttons, parse_reply_markup
from sandbox.fake_api.topics import send_thread
from sandbox.fake_api.world import PRESENT, World

ONLY_IN_GROUPS = "Bad Request: ephemeral messages can be sent only to group and supergroup chats"
NOT_PARTICIPANT = "Bad Request: USER_NOT_PARTICIPANT"
NOT_FOUND_EDIT = "Bad Request: message to edit not found"
NOT_FOUND_DELETE = "Bad Request: message to delete not found"
_SHOWN_FIELDS = ("text", "entities", "source", "parse_mode", "reply_markup", "edit_date")


def _parameters(p: CallParams) -> dict[str, Any] | None:
    given = p.json("ephemeral_message_parameters")
    if given is None:
        if "receiver_user_id" not in p:
            if "callback_query_id" in p:
                raise BotApiError(400, "Bad Request: callback_query_id needs receiver_user_id")
            return None
        return {
            "receiver_user_id": p.raw["receiver_user_id"],
            "callback_query_id": p.string("callback_query_id"),
        }
    if not isinstance(given, dict):
        raise BotApiError(400, "Bad Request: can't parse ephemeral_message_parameters JSON object")
    return given


def _receiver(world: World, chat: Chat, params: dict[str, Any]) -> int:
    raw = params.get("receiver_user_id")
    if raw is None:
        raise BotApiError(400, 'Bad Request: parameter "receiver_user_id" is required')
    receiver = CallParams({"receiver_user_id": raw}).req_integer("receiver_user_id")
    user = world.users.get(receiver)
    if user is None or user.is_bot:
        raise BotApiError(400, "Bad Request: user not found")
    if chat.members.get(receiver) not in PRESENT:
        raise BotApiError(400, NOT_PARTICIPANT)
    return receiver


def _query(world: World, chat: Chat, receiver: int, params: dict[str, Any]) -> CallbackQuery | None:
    query_id = params.get("callback_query_id")
    replace = bool(params.get("replace_callback_query_message"))
    if query_id in (None, ""):
        if replace:
            raise BotApiError(
                400, "Bad Request: replace_callback_query_message needs callback_query_id"
            )
        return None
    query = world.callback_queries.get(str(query_id))
    if query is None or world.clock() - query.pressed_at > world.callback_answer_window:
        raise BotApiError(400, QUERY_INVALID)
    if query.user_id != receiver or query.message.chat is not chat:
        raise BotApiError(
            400, "Bad Request: the callback query was not sent by the receiver in this chat"
        )
    if replace and query.message.ephemeral_message_id is not None:
        raise BotApiError(
            400,
            "Bad Request: replace_callback_query_message must be False for callback queries "
            "from ephemeral messages",
        )
    return query


def _markup(p: CallParams) -> dict[str, Any] | None:
    markup = parse_reply_markup(p.raw.get("reply_markup"))
    check_private_only(markup, private=False)  # in a group: no web_app button (#42)
    if any("login_url" in button for button in iter_buttons(markup)):
        raise BotApiError(400, "Bad Request: BUTTON_TYPE_INVALID")
    return markup


def _show(world: World, message: Message, kind: str) -> None:
    """Deliver the bot's current version of ``message`` to its receiver if he is
    online; either way note it in the outbox (with who was shown it)."""
    chat = message.chat
    assert message.ephemeral_message_id is not None
    assert message.receiver_id is not None
    if not world.users[message.receiver_id].online:
        world.record_outgoing(message, kind)
        return
    shown = chat.ephemeral_shown.get(message.ephemeral_message_id)
    if shown is None:
        shown = Message(
            chat=chat,
            message_id=0,
            date=message.date,
            from_id=message.from_id,
            ephemeral_message_id=message.ephemeral_message_id,
            receiver_id=message.receiver_id,
            replaces=message.replaces,
            reply_to=message.reply_to,
            quote=message.quote,
            created=message.created,
            thread_id=message.thread_id,
        )
        chat.ephemeral_shown[message.ephemeral_message_id] = shown
    for name in _SHOWN_FIELDS:  # in place: a test's reference stays current
        setattr(shown, name, getattr(message, name))
    shown.version, shown.edits = message.version, message.edits
    world.record_outgoing(shown, kind)


async def send_ephemeral(world: World, p: CallParams, params: dict[str, Any]) -> Any:
    chat = resolve_chat(world, p.chat_id())
    if not chat.is_group:
        raise BotApiError(400, ONLY_IN_GROUPS)
    check_can_write(world, chat)
    receiver = _receiver(world, chat, params)
    query = _query(world, chat, receiver, params)
    fields = message_text(p)
    markup = _markup(p)
    reply_to, quote = reply_target(world, p, chat, ephemeral=True)
    thread = send_thread(p, chat, reply_to)  # in a forum's topic, as a public one
    check_rate(world, chat, receiver)
    ephemeral_id = chat.next_ephemeral_id
    chat.next_ephemeral_id += 1
    replaces = bool(params.get("replace_callback_query_message"))
    message = Message(
        chat=chat,
        message_id=0,
        date=world.now(),
        from_id=world.bot.id,
        reply_markup=markup,
        reply_to=reply_to,
        quote=quote,
        ephemeral_message_id=ephemeral_id,
        receiver_id=receiver,
        replaces=query.message.message_id if query is not None and replaces else None,
        thread_id=thread,
        **fields,
    )
    chat.ephemeral[ephemeral_id] = message
    message.version = message.created = world.touch(
        "ephemeral_new",
        chat_id=chat.id,
        user_id=receiver,
        detail={"ephemeral_message_id": ephemeral_id},
    ).seq
    _show(world, message, "send")
    return message.to_api(world.users)


@method("sendMessage")
async def send_message(world: World, p: CallParams) -> Any:
    params = _parameters(p)
    if params is None:
        return await send_public(world, p)
    return await send_ephemeral(world, p, params)


def _target(world: World, p: CallParams, not_found: str) -> Message:
    chat = resolve_chat(world, p.chat_id())
    check_can_write(world, chat)
    receiver = p.req_integer("receiver_user_id")
    message = chat.ephemeral.get(p.req_integer("ephemeral_message_id"))
    if message is None or message.receiver_id != receiver:
        raise BotApiError(400, not_found)
    return message


def _edit(world: World, message: Message, **changes: Any) -> bool:
    compared = ("text", "entities", "reply_markup")
    if all(changes[name] == getattr(message, name) for name in compared if name in changes):
        world.stats.not_modified += 1
        raise BotApiError(400, NOT_MODIFIED)
    check_rate(world, message.chat, message.receiver_id)
    for name, value in changes.items():
        setattr(message, name, value)
    message.edit_date = world.now()
    message.edits += 1
    message.version = world.touch(
        "ephemeral_edited",
        chat_id=message.chat_id,
        user_id=message.receiver_id,
        detail={"ephemeral_message_id": message.ephemeral_message_id},
    ).seq
    _show(world, message, "edit")
    return True


@method("editEphemeralMessageText")
async def edit_ephemeral_message_text(world: World, p: CallParams) -> Any:
    message = _target(world, p, NOT_FOUND_EDIT)
    fields = message_text(p)
    # As with editMessageText: an edit without reply_markup removes the keyboard.
    return _edit(world, message, reply_markup=_markup(p), **fields)


@method("editEphemeralMessageReplyMarkup")
async def edit_ephemeral_message_reply_markup(world: World, p: CallParams) -> Any:
    message = _target(world, p, NOT_FOUND_EDIT)
    return _edit(world, message, reply_markup=_markup(p))


@method("deleteEphemeralMessage")
async def delete_ephemeral_message(world: World, p: CallParams) -> Any:
    message = _target(world, p, NOT_FOUND_DELETE)
    chat = message.chat
    assert message.ephemeral_message_id is not None
    assert message.receiver_id is not None
    del chat.ephemeral[message.ephemeral_message_id]
    if world.users[message.receiver_id].online:
        chat.ephemeral_shown.pop(message.ephemeral_message_id, None)
    world.touch(
        "ephemeral_deleted",
        chat_id=chat.id,
        user_id=message.receiver_id,
        detail={"ephemeral_message_id": message.ephemeral_message_id},
    )
    return True
