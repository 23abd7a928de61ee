"""Telegram adapter (aiogram 3): routers, keyboards, callback data, rendering.

Not built yet; see ``python -m telegram_bot``.
"""
