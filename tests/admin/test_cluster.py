"""A representative subset of the admin API tests -- lists and pages, detail,
event log, reset, abort/end, delete, If-Match, lobbies, players, audit -- run
again with the app on a 3-master Redis Cluster (``REDIS_URL`` a
``redis+cluster://`` URL, :mod:`tables.client`).  The tests are the ones of
their modules, imported here, so this module's ``admin_redis_url`` applies."""

from __future__ import annotations

import pytest

from tests.admin.test_games import (
    notes,
    test_abort_and_end,
    test_delete,
    test_detail_has_every_hand_seats_timers_and_version,
    test_event_log_pages,
    test_if_match_mismatch_is_409_and_changes_nothing,
    test_list_filters_and_pages,
    test_list_pages_by_cursor,
    test_reset_to_the_lobby_keeps_the_seats_and_notifies,
    test_unknown_game_is_404,
)
from tests.admin.test_lobbies_players import (
    test_audit_records_every_write_and_pages,
    test_lobbies_list_detail_and_cancel,
    test_player_lookup,
    test_stats,
)

__all__ = [
    "notes",
    "test_abort_and_end",
    "test_audit_records_every_write_and_pages",
    "test_delete",
    "test_detail_has_every_hand_seats_timers_and_version",
    "test_event_log_pages",
    "test_if_match_mismatch_is_409_and_changes_nothing",
    "test_list_filters_and_pages",
    "test_list_pages_by_cursor",
    "test_lobbies_list_detail_and_cancel",
    "test_player_lookup",
    "test_reset_to_the_lobby_keeps_the_seats_and_notifies",
    "test_stats",
    "test_unknown_game_is_404",
]


@pytest.fixture
def admin_redis_url(redis_cluster_url: str) -> str:
    return redis_cluster_url
