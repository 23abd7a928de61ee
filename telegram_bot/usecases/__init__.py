"""Use cases of the bot: what one update asks for, carried out through the table
service and the publisher, with a typed outcome the handler turns into an answer.
No aiogram types here: a handler parses the update, calls one use case and
answers."""
