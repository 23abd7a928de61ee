"""Use cases of the bot: what one update asks for, carried out through the table
service and the publisher, with a typed outcome the handler turns into an answer.
They take plain values (ids, names, languages, parsed callback data), never an
aiogram update or message: a handler parses the update, calls one use case and
answers."""
