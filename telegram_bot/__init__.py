"""The Telegram bot: an aiogram 3 adapter over the table service, in layers
(each imports only those below it; ``lint-imports`` checks it):

``app`` (wiring) -> ``handlers`` (parse an update, call one use case, answer)
-> ``usecases`` (what an update asks for; outcomes and changes as data) ->
``publishing`` (which messages change for whom, and when) -> ``views`` (what a
message shows, pure) | ``delivery`` (within Telegram's flood limits: Redis token
buckets shared by every bot process) -> ``buttons`` (callback data, what a
press means) -> ``state`` (the bot's own state in Redis, through the service's
key-value API: the bot never imports redis) -> ``settings``.

Run it with ``durak bot`` or ``python -m telegram_bot``; docs/ARCHITECTURE.md
follows one button press through the layers.
"""
