"""Every use case of the bot, built once (:class:`telegram_bot.app.BotApp`) and
handed to the handlers as one typed value: a handler names the use case it
calls (``cases.press``), so the route of an update can be followed by reading."""

from __future__ import annotations

from dataclasses import dataclass

from telegram_bot.usecases.arena import ArenaActions
from telegram_bot.usecases.cards import MyCards
from telegram_bot.usecases.lobby import LobbyActions
from telegram_bot.usecases.page import PageTables
from telegram_bot.usecases.player import PlayerActions
from telegram_bot.usecases.press import PressButton
from telegram_bot.usecases.replay import ReplayGame
from telegram_bot.usecases.standings import Standings
from telegram_bot.usecases.watch import WatchTable


@dataclass(frozen=True)
class UseCases:
    press: PressButton  # a button of a hand message
    lobby: LobbyActions  # /new, /play, joining, the lobby message's buttons
    player: PlayerActions  # /leave, /lang, Open my table, Take my seat back
    my_cards: MyCards  # My cards under a group's table
    watch: WatchTable  # /watch, Watch
    replay: ReplayGame  # /replay, Replay, ◀ ▶
    standings: Standings  # /stats, /top, inline invitations
    arena: ArenaActions  # /arena, its set-up, Join and Withdraw (#27)
    page: PageTables  # the Mini App's page: its table, its moves (#42)
