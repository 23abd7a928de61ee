"""A group game's lobby for end-to-end tests: the bot added to a group, /new,
Join, Add AI, Start."""

from __future__ import annotations

from collections.abc import Sequence

from sandbox.fake_api import Chat, SimUser
from tests.bot.e2e_kit import SAFETY, Harness, record_seeds


async def group_lobby(
    h: Harness,
    variant: str,
    humans: list[SimUser],
    ai: int,
    watchers: Sequence[SimUser] = (),
    *,
    topic: str | None = None,
) -> tuple[str, Chat]:
    """A started game of ``humans`` and ``ai`` AI seats in a new group (``watchers``
    are members who do not play); the table's id and the group.  ``topic``: the
    group is a forum, and /new is sent in a new topic of that name (its thread
    id: the group's only key of ``Chat.topics``)."""
    fake = h.fake
    owner = humans[0]
    group = owner.create_group("Card night", *humans[1:], *watchers, forum=topic is not None)
    owner.add_bot_to(group)
    await owner.wait_message("/new", group, timeout=SAFETY)  # the two-line how-to
    for u in humans:
        u.start()
        await u.wait_message(timeout=SAFETY)
    thread = None if topic is None else owner.create_topic(group, topic)
    owner.send(f"/new {variant}", group, topic=thread)
    lobby = await owner.wait_message("Invitation link", group, timeout=SAFETY)
    for u in humans[1:]:
        answer = await u.press("Join", message=lobby, chat=group).wait_answer(SAFETY)
        assert answer["url"] is None, answer
    for _ in range(ai):
        await owner.press("Add AI", message=lobby, chat=group).wait_answer(SAFETY)
    table = await h.svc.tables.where(owner.id)
    assert table is not None
    assert len(table.seats) == len(humans) + ai
    record_seeds(h.svc)
    await owner.press("Start", message=lobby, chat=group).wait_answer(SAFETY)
    for u in humans:
        await fake.wait_message(u.chat, "Players", timeout=SAFETY)
    await h.wait_hands(table.id, humans)
    return table.id, group
