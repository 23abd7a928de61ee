"""telegram_bot.state."""
