"""Forum supergroups and their topics, as the Bot API documents them.

A forum (``Chat.is_forum``) is a supergroup whose messages live in topics; a
topic is a message thread whose id is the ``message_id`` of its
``forum_topic_created`` service message.  The General topic is no thread: its
messages carry no ``message_thread_id``, and a send without one lands there.

What the fake does, and what it chose where the docs leave room:

- A message in a topic has ``message_thread_id`` (the topic's id) and
  ``is_topic_message: true``; one that replies to nothing comes as a reply to
  the topic's ``forum_topic_created`` message, as Telegram's do.  A reply in a
  supergroup outside any topic (General included) carries the id of its reply
  thread's first message as ``message_thread_id`` without ``is_topic_message``:
  that is no topic, and a send to it answers "message thread not found" (the
  trap of tdlib/telegram-bot-api#447).
- ``sendMessage`` takes ``message_thread_id`` ("for forum supergroups ...
  only"), an ephemeral message's too (it is sent by ``sendMessage``): a topic
  of that forum, else 400 "Bad Request: message thread not found" -- in any
  other chat as well (the bot has no topic mode in private chats), and for
  ``1`` (Telegram's General, which the Bot API does not take).  A reply goes
  to the replied message's topic whatever ``message_thread_id`` says (a reply
  chain is the thread); 0 is taken as not given.
- Edits and deletions name a message by id: no thread id, and the message
  stays in its topic.
- Only a forum's creator or administrators create topics here (Telegram's
  ``can_manage_topics``); topics are never closed or deleted.
"""

from __future__ import annotations

from sandbox.fake_api.errors import BotApiError
from sandbox.fake_api.models import Chat, Message
from sandbox.fake_api.params import CallParams

THREAD_NOT_FOUND = "Bad Request: message thread not found"
GENERAL = 1
"""The General topic's thread id in Telegram (never a topic here: no thread)."""
ICON_COLOR = 0x6FB9F0
"""The first of the six icon colours Telegram offers a topic without an emoji."""


def send_thread(p: CallParams, chat: Chat, reply_to: Message | None) -> int | None:
    """The topic a send goes to (None: General, or no forum): the replied
    message's when it replies in this chat, else ``message_thread_id``, which
    must name a topic of ``chat``."""
    asked = p.integer("message_thread_id") or None
    if asked is not None and (not chat.is_forum or asked not in chat.topics):
        raise BotApiError(400, THREAD_NOT_FOUND)
    if reply_to is not None and reply_to.chat is chat:
        return reply_to.thread_id
    return asked


def user_thread(chat: Chat, topic: int | None, reply_to: Message | None) -> int | None:
    """The topic a simulated user's message goes to: the replied message's, or
    ``topic`` (None: General) -- which must be a topic of the forum ``chat``."""
    if topic is not None and (not chat.is_forum or topic not in chat.topics):
        raise LookupError(f"chat {chat.id} has no topic {topic}")
    if reply_to is not None and reply_to.chat is chat:
        if topic is not None and topic != reply_to.thread_id:
            raise ValueError(f"a reply goes to the topic of message {reply_to.message_id}")
        return reply_to.thread_id
    return topic


__all__ = ["GENERAL", "ICON_COLOR", "THREAD_NOT_FOUND", "send_thread", "user_thread"]
