"""telegram_bot.delivery.coalesce.flood."""
