"""Use cases of the bot: what one update asks for, carried out through the bot's
state and the table service, with a typed outcome the handler turns into an
answer and, as data, what changed (:mod:`telegram_bot.publishing.changes`),
which the publisher shows once the user is answered.  They take plain values
(ids, names, languages, parsed callback data), never an aiogram update or
message: a handler parses the update, calls one use case, answers, and hands the
change on.  All of them, built once: :class:`telegram_bot.usecases.cases.UseCases`."""
