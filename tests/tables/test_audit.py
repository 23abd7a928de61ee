"""The audit log: writes and refused attempts live in two streams (so refusals
never push writes out) but read back as one log in the order they were written,
even within one millisecond."""

from __future__ import annotations

from tables import TableService


async def test_writes_and_refusals_read_back_in_the_order_written(svc: TableService) -> None:
    written = []
    for i in range(60):  # many land in the same millisecond
        status = "403" if i % 3 else "200"
        await svc.audit_log.audit({"actor": "t", "action": f"a{i}", "status": status})
        written.append(f"a{i}")
    seen: list[str] = []
    before = None
    while True:
        page = await svc.audit_log.audit_page(before=before, count=7)
        seen += [e.fields["action"] for e in page.entries]
        if len(page.entries) < 7:
            break
        before = page.entries[-1].id
    assert list(reversed(seen)) == written
    ids = [e.id for e in (await svc.audit_log.audit_page(count=100)).entries]
    assert len(set(ids)) == len(ids) == 60  # one id sequence for both streams
