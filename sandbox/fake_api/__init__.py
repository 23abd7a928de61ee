"""A fake Telegram Bot API server for tests, benchmarks and the local sandbox.

    async with FakeTelegram() as fake:
        bot = fake.make_bot()              # a real aiogram Bot pointed at fake.url
        alice = fake.add_user("Alice", language_code="en")
        alice.start()                      # /start in her chat with the bot
        ...                                # the bot polls fake.url and answers
        reply = await alice.wait_message("Welcome")
        query = alice.press("Join", message=reply)
        answer = await query.wait_answer() # what answerCallbackQuery showed her

See ``server.FakeTelegram`` (lifecycle, shortcuts), ``users.SimUser`` (what a
simulated person does), ``inbox`` (what the bot receives of it), ``world.World``
(state, snapshot), ``feed.ChangeFeed`` (its change feed and waits) and ``limits``
(flood limits, ``ManualClock``, call statistics).

Newer Bot API features, as documented (choices where the docs leave room are in
each module's docstring): ``<tg-time>`` / ``date_time`` entities and button
``style`` / ``disabled`` (``text``); ephemeral messages seen only by their
receiver, an offline switch per user (``methods_ephemeral``, ``views``,
``SimUser.set_online``). ``World.outbox`` entries say who was shown each message
(``visible_to``, ``receiver_user_id``) and ``World.shown_to(user_id)`` lists what
one user was shown: the input of a leak check.  Forum supergroups (``topics``):
``SimUser.create_group(forum=True)``, ``create_topic``, ``send(topic=)``; a
bot's send with ``message_thread_id`` lands in that topic, without one in
General (the outbox says which: ``message_thread_id``).
"""

from sandbox.fake_api.errors import BotApiError
from sandbox.fake_api.limits import ManualClock, RateLimits, Stats
from sandbox.fake_api.models import CallbackQuery, Chat, FeedEvent, InlineQuery, Message, User
from sandbox.fake_api.server import FakeTelegram
from sandbox.fake_api.users import SimUser
from sandbox.fake_api.world import BotOptions, World

__all__ = [
    "BotApiError",
    "BotOptions",
    "CallbackQuery",
    "Chat",
    "FakeTelegram",
    "FeedEvent",
    "InlineQuery",
    "ManualClock",
    "Message",
    "RateLimits",
    "SimUser",
    "Stats",
    "User",
    "World",
]
