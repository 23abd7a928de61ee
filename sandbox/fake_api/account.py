"""A simulated person's account and what his app shows him: the base of
``users.SimUser`` (which adds what he does in chats)."""

from __future__ import annotations

from sandbox.fake_api.inbox import member_update
from sandbox.fake_api.models import Chat, MemberStatus, User
from sandbox.fake_api.world import PRESENT, World


class SimAccount:
    """One simulated person's account. ``acted_at`` is the world's version before
    his last action."""

    def __init__(self, world: World, user: User) -> None:
        self.world = world
        self.user = user
        self.acted_at = world.version

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.user.first_name!r}, id={self.user.id})"

    @property
    def id(self) -> int:
        return self.user.id

    @property
    def chat(self) -> Chat:
        """His private chat with the bot."""
        return self.world.private_chat(self.user)

    def _act(self) -> None:
        if self.user.deactivated:
            raise PermissionError(f"{self!r} deleted his account")
        self.acted_at = self.world.version

    def _chat(self, chat: Chat | None) -> Chat:
        return self.chat if chat is None else chat

    def can_see(self, chat: Chat) -> bool:
        if chat.user_id is not None:
            return chat.user_id == self.id
        if chat.peer_ids is not None:
            return self.id in chat.peer_ids
        return chat.members.get(self.id) in PRESENT

    # ------------------------------------------------------------ account
    def block(self) -> None:
        """Block the bot: a ``my_chat_member`` update (member -> kicked)."""
        self._set_blocked(True)

    def unblock(self) -> None:
        self._set_blocked(False)

    def deactivate(self) -> None:
        """Delete his account: the bot's writes to his private chat are answered
        403 "Forbidden: user is deactivated" (the bot gets no update), and he
        does nothing any more."""
        self._act()
        self.user.deactivated = True
        self.world.touch("user_deactivated", user_id=self.id)

    def _set_blocked(self, blocked: bool) -> None:
        if self.user.blocked == blocked:
            return
        self._act()
        world = self.world
        self.user.blocked = blocked
        old: MemberStatus = "member" if blocked else "kicked"
        new: MemberStatus = "kicked" if blocked else "member"
        world.touch("user_blocked" if blocked else "user_unblocked", user_id=self.id)
        world.enqueue(
            "my_chat_member", member_update(world, self.chat, self.user, world.bot, old, new)
        )

    def set_language(self, language_code: str | None) -> None:
        """Change the app language (later updates carry the new ``language_code``)."""
        self.user.language_code = language_code
        self.world.touch("user_changed", user_id=self.id)

    def set_online(self, online: bool) -> None:
        """Go offline or back online. While he is offline, ephemeral messages, their
        edits and deletions do not reach him (the Bot API: "it is not guaranteed that
        the user will receive the message, especially if they are offline"); the bot
        is not told. Coming back online does not bring missed ones back."""
        self.user.online = online
        self.world.touch("user_changed", user_id=self.id, detail={"online": online})
