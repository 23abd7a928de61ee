"""The flood limiter beneath the delivery: sliding windows in Redis shared by every
bot process (:mod:`~telegram_bot.delivery.flood.limiter`, its Lua scripts in
:mod:`~telegram_bot.delivery.flood.scripts`, its rates in
:mod:`~telegram_bot.delivery.flood.rates`), the fleet-wide window leased in
batches (:mod:`~telegram_bot.delivery.flood.lease`), the waiting lines, the
tickets and a chat's turns (:mod:`~telegram_bot.delivery.flood.gate`), and
in-process windows while Redis is down (:mod:`~telegram_bot.delivery.flood.journal`,
:mod:`~telegram_bot.delivery.flood.fallback`)."""
