"""Which messages change for whom, and when: the
:class:`~telegram_bot.publishing.publisher.Publisher` decides the edits a change
needs (:mod:`~telegram_bot.publishing.changes`: the data a use case returns),
draws them with the views and hands them to the delivery; where each player's
hand lives -- in the group or in private -- is
:class:`~telegram_bot.publishing.hands.HandPlacement`; a lobby's own messages
are :class:`~telegram_bot.publishing.lobby_messages.LobbyMessages`; a render
lost with its process is repaired (:mod:`~telegram_bot.publishing.repair`)."""
