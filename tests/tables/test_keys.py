"""The key names of data Redis keeps across deploys: renaming one would orphan
what is stored under the old name (replays, refused audit entries), so they
stay byte for byte as they were when each part spelled its own."""

from __future__ import annotations

from tables import Keys


def test_the_names_of_kept_data_stay() -> None:
    k = Keys("durak:")
    assert k.record("AbCdEf12", 3) == "durak:rec:AbCdEf12:3"
    assert k.recent_records(42) == "durak:rec:u:42"
    assert k.audit == "durak:{audit}"
    assert k.audit_refused == "durak:{audit}:refused"


def test_the_ratings_and_arenas_keys_stay_as_they_were() -> None:
    """#39: the ``{rt}``/``{ru}``/``{rl}`` and ``{ar}`` keys, now spelled in
    :mod:`tables.keys`, name the data stored before the move."""
    from tables.keys import ArenaKeys, RatingKeys

    r = RatingKeys("durak:")
    assert r.user_keys(7) == [
        "durak:{ru:7}:r", "durak:{ru:7}:rel", "durak:{ru:7}:off", "durak:{ru:7}:cool",
        "durak:{ru:7}:h", "durak:{ru:7}:done", "durak:{ru:7}:donez", "durak:{ru:7}:pend",
    ]  # fmt: skip
    assert r.opponents(7) == "durak:{ru:7}:opp"
    assert r.pair(3, 9) == "durak:{ru:3}:pair:9"
    assert r.game(5, "T", 2) == "durak:{rl:5}:g:T:2"
    assert r.log(5) == "durak:{rl:5}:log"
    assert r.board("chuvash") == "durak:{rt}:top:chuvash"
    assert r.board("chuvash", True) == "durak:{rt}:new:chuvash"
    assert r.board_rev("chuvash") == "durak:{rt}:brev:chuvash"
    assert r.migrated == "durak:{rt}:migrated"
    assert (r.legacy_game("T", 2), r.legacy_log) == ("durak:{rt}:g:T:2", "durak:{rt}:log")
    assert r.legacy_user(7)["r"] == "durak:{rt}:r:7"
    assert r.legacy_user(7)["pend"] == "durak:{rt}:pend:7"
    assert r.legacy_pair(3, 9) == "durak:{rt}:pair:3:9"
    a = ArenaKeys("durak:")
    assert (a.arena("x"), a.games("x"), a.repair("x")) == (
        "durak:{ar:x}", "durak:{ar:x}:games", "durak:{ar:x}:repair",
    )  # fmt: skip
    assert (a.chat(-5), a.all) == ("durak:{ar}:chat:-5", "durak:{ar}:all")
