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
