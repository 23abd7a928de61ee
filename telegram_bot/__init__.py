"""The Telegram bot: an aiogram 3 adapter over the table service.

Handlers (:mod:`telegram_bot.handlers`) parse an update, call one use case
(:mod:`telegram_bot.usecases`) and answer; the publisher decides which messages a
write changed and the pure screens draw them; delivery keeps within Telegram's
flood limits (Redis token buckets shared by every bot process).  The bot's own
state -- message ids, selections, languages, flood buckets, digests of what a
message shows -- lives in Redis through the service's generic key-value API
(:mod:`telegram_bot.state.chat_state`, :mod:`telegram_bot.delivery.flood.limiter`); the bot never
imports redis.  Run it with ``durak bot`` or ``python -m telegram_bot``; see
docs/ARCHITECTURE.md for the path of one button press.
"""
