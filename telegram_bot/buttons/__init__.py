"""The inline buttons: every ``CallbackData`` of the bot in one module
(:mod:`telegram_bot.buttons.callbacks`) and what a press of a hand message's
button means (:mod:`telegram_bot.buttons.moves`: a move, a toggle of the
selection, or stale).  Pure: no I/O."""
