"""The bot's own state, in Redis through the table service's key-value API
(the bot never imports redis): the chat state of each table (message ids,
selections, languages, spectators), users' and groups' preferences, the update
dedupe, the pending-render marks, the per-process write claims, and the
:class:`~telegram_bot.state.snapshot.Snapshot` -- a table as loaded to show it.
Every Redis key the bot spells is named in :mod:`telegram_bot.state.keys`.  The
bottom layer of the bot: it imports nothing of the others."""
