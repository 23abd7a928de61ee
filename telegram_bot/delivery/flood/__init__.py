"""The flood limiter beneath the delivery: token buckets in Redis shared by every
bot process (:mod:`~telegram_bot.delivery.flood.limiter`, its Lua scripts in
:mod:`~telegram_bot.delivery.flood.scripts`, its rates in
:mod:`~telegram_bot.delivery.flood.rates`), the fleet-wide bucket leased in
batches (:mod:`~telegram_bot.delivery.flood.lease`), the waiting line and the
tickets (:mod:`~telegram_bot.delivery.flood.gate`), a chat held after a 429
(:mod:`~telegram_bot.delivery.flood.hold`), and in-process buckets while Redis
is down (:mod:`~telegram_bot.delivery.flood.fallback`)."""
