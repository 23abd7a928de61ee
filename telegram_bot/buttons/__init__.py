"""telegram_bot.buttons."""
