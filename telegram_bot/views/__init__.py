"""What each message shows, from data (pure: no I/O, no Bot, no delivery): a
player's hand (:mod:`~telegram_bot.views.hand`), the group's table and a
spectator's view (:mod:`~telegram_bot.views.table`), the lines both share
(:mod:`~telegram_bot.views.board`), a lobby and its settings
(:mod:`~telegram_bot.views.lobby`), a replay, the fair-deal lines, stats; the
texts, the card glyphs, formatting and keyboards, and the translations
(:mod:`~telegram_bot.views.i18n`)."""
