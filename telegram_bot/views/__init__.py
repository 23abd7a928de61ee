"""telegram_bot.views."""
