"""telegram_bot.publishing."""
