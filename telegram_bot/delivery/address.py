"""Where one write goes (#39): :class:`Address`, the one vocabulary of the
delivery and its flood limiter for a chat, the message an edit changes and the
member an ephemeral message goes to."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Address:
    """``chat``; ``message``: the message an edit changes (None: a send) -- an
    ephemeral message's own ``ephemeral_message_id``; ``receiver``: the member
    of the group an ephemeral message goes to (None: every member sees it)."""

    chat: int
    message: int | None = None
    receiver: int | None = None

    @property
    def ephemeral(self) -> bool:
        """A message to one member of a group (#14, #24)."""
        return self.receiver is not None

    @property
    def key(self) -> tuple[int, int] | None:
        """The message's key where what it shows is kept (the digests, the edit
        lease, its last edit, the slots): ``(chat, id)``, an ephemeral one's
        ``(chat, -id)`` -- the two id spaces never meet.  None: a send."""
        if self.message is None:
            return None
        return (self.chat, -self.message if self.ephemeral else self.message)

    @classmethod
    def of_key(cls, key: tuple[int, int], receiver: int | None = None) -> Address:
        """The address of the message kept under ``key`` (:attr:`key`)."""
        chat, message = key
        return cls(chat, -message if receiver is not None and message < 0 else message, receiver)


__all__ = ["Address"]
