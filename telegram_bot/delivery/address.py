"""Where one write goes (#39): :class:`Address`, the one vocabulary of the
delivery and its flood limiter for a chat, the message an edit changes and the
member an ephemeral message goes to."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Address:
    """``chat``; ``message``: the message an edit changes (None: a send; an
    ephemeral one's own id); ``receiver``: the member an ephemeral message goes
    to (None: every member sees it); ``thread``: where in ``chat`` a send goes
    -- a forum group's topic (``message_thread_id``; None: the chat as a
    whole, General in a forum).  The thread is no part of a message's
    identity (an edit names the message by its id, and it stays in its
    topic): it only says where a gone message is sent anew."""

    chat: int
    message: int | None = None
    receiver: int | None = None
    thread: int | None = field(default=None, compare=False)

    @property
    def ephemeral(self) -> bool:
        """A message to one member of a group (#14, #24)."""
        return self.receiver is not None

    @property
    def key(self) -> tuple[int, int]:
        """The message's part of its Redis keys and of a render's claim: ``(chat,
        id)``, an ephemeral one's ``(chat, -id)`` (the two id spaces never meet)."""
        assert self.message is not None, "a send has no message yet"
        return (self.chat, -self.message if self.ephemeral else self.message)


__all__ = ["Address"]
