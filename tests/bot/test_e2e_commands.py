"""End to end, the commands of issue 13: one greeting when the bot is added
through *Add me to a group*; /new during a game names that table with a button
that opens it; /play in a group answers; /leave mid-game is one message with
*Take my seat back*, and every command is answered below it (#41); /rules is
one message with expandable quotes; /top is not in the private menu; only a
group's admins change its language (getChatMember); /lang sets the command
menu of that chat too."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from sandbox.fake_api import FakeTelegram, Message, RateLimits
from telegram_bot.buttons.callbacks import SeatCb
from tests.bot.e2e_kit import (
    SAFETY,
    Harness,
    has_game_buttons,
    has_lobby_buttons,
    running,
    settle,
)

GREETING = "Hi! I run games"
OPEN = "🃏 Open my table"


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


async def test_add_me_to_a_group_greets_once_and_opens_a_lobby(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        ann, bob = (fake.add_user(n, language_code="en") for n in ("Ann", "Bob"))
        ann.start()
        welcome = await ann.wait_message("Welcome", timeout=SAFETY)
        link = next(b["url"] for b in welcome.buttons if "startgroup" in b.get("url", ""))
        group = ann.create_group("Card night", bob)
        ann.follow_link(link, group)  # my_chat_member, then "/start@bot new"
        await ann.wait_message(has_lobby_buttons, group, timeout=SAFETY)
        await settle(h)
        greetings = [m for m in fake.messages(group) if GREETING in (m.text or "")]
        assert len(greetings) == 1
        table = await h.svc.tables.where(ann.id)
        assert table is not None
        assert table.chat == group.id


async def test_new_during_a_game_names_this_table(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        ann = fake.add_user("Ann", language_code="en")
        ann.start()
        await ann.wait_message(timeout=SAFETY)
        ann.send("/play shchelkovsky")
        await ann.wait_message(has_game_buttons, timeout=SAFETY)
        ann.send("/new")
        refusal = await ann.wait_message("already at", timeout=SAFETY)
        assert refusal.text == (
            "You are already at a Durak Shchelkovsky table (a private game): "
            "leave it first (/leave)."
        )
        assert OPEN in refusal.button_texts
        # in a group, /new during that group's game: "this table"
        bob = fake.add_user("Bob", language_code="en")
        group = bob.create_group("Card night", ann)
        bob.add_bot_to(group)
        bob.start()
        await bob.wait_message(timeout=SAFETY)
        bob.send("/new", group)
        lobby = await bob.wait_message("Invitation link", group, timeout=SAFETY)
        await bob.press("Add AI", message=lobby, chat=group).wait_answer(SAFETY)
        await bob.press("Start", message=lobby, chat=group).wait_answer(SAFETY)
        await bob.wait_message(has_game_buttons, timeout=SAFETY)
        bob.send("/new", group)
        here = await bob.wait_message("already at", group, timeout=SAFETY)
        assert here.text == "You are already at this table: Chuvash Rooster."
        assert OPEN in here.button_texts
        old = await h.hand_message(bob)
        assert old is not None
        answer = await bob.press(OPEN, message=here, chat=group).wait_answer(SAFETY)
        assert answer["text"] == "Here is your table."
        assert (await h.svc.tables.where(bob.id)) is not None
        # the old private hand is retired: it says where the cards are, no buttons (#29)
        await fake.world.wait_for(
            lambda: old.text == "Your cards are in a newer message below." or None, SAFETY
        )
        assert not old.buttons
        new = await h.hand_message(bob)
        assert new is not None
        assert new.message_id > old.message_id
        assert has_game_buttons(new)


async def test_play_in_a_group_offers_a_solo_game_or_a_lobby(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        ann, bob = (fake.add_user(n, language_code="en") for n in ("Ann", "Bob"))
        group = ann.create_group("Card night", bob)
        ann.add_bot_to(group)
        await ann.wait_message(GREETING, group, timeout=SAFETY)
        ann.send("/play", group)
        offer = await ann.wait_message("private chat", group, timeout=SAFETY)
        solo = next(b["url"] for b in offer.buttons if "url" in b)
        # Bob takes the solo game: the deep link starts it in his private chat
        bob.follow_link(solo)
        await bob.wait_message(has_game_buttons, timeout=SAFETY)
        table = await h.svc.tables.where(bob.id)
        assert table is not None
        assert table.status == "playing"
        # against the AI: casual, so the kit's "no turn timer" holds (#38: rated alone need one)
        assert (table.rated, table.timer) == (False, 0)
        # Ann opens a lobby here
        answer = await ann.press("Open a lobby here", message=offer, chat=group).wait_answer(SAFETY)
        assert not answer["show_alert"]
        await ann.wait_message("Invitation link", group, timeout=SAFETY)
        lobby = await h.svc.tables.where(ann.id)
        assert lobby is not None
        assert lobby.chat == group.id


async def test_leave_mid_game_is_one_message_with_the_way_back(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        ann, bob = (fake.add_user(n, language_code="en") for n in ("Ann", "Bob"))
        ann.start()
        await ann.wait_message(timeout=SAFETY)
        ann.send("/new")
        lobby = await ann.wait_message(has_lobby_buttons, timeout=SAFETY)
        table = await h.svc.tables.where(ann.id)
        assert table is not None
        bob.follow_link(f"https://t.me/{fake.world.bot.username}?start={table.id}")
        await bob.wait_message("You joined", timeout=SAFETY)
        await ann.press("Start", message=lobby).wait_answer(SAFETY)
        await h.wait_hands(table.id, [ann, bob])
        command = ann.send("/leave")
        left = await ann.wait_message("You left the game", timeout=SAFETY)
        await settle(h)
        # one message carries the way back: his hand, above; the command is
        # answered below it, as a reply that says where that is (#41)
        saying = [m for m in fake.messages(ann.chat) if "🙋 Take my seat back" in m.button_texts]
        assert saying == [left]
        assert left.message_id < command.message_id
        replies = [m for m in fake.messages(ann.chat) if m.reply_to is command]
        assert [m.text for m in replies] == [
            "You left: the AI plays your seat now. Your cards message above has 🙋 Take my "
            "seat back while the game lasts."
        ]
        assert not replies[0].buttons
        assert "🙋 Take my seat back" in left.button_texts
        assert await h.svc.tables.where(ann.id) is None
        answer = await ann.press("Take my seat back", message=left).wait_answer(SAFETY)
        assert answer["text"] == "You are playing your seat again."
        back = await h.svc.tables.where(ann.id)
        assert back is not None
        assert back.id == table.id
        await fake.world.wait_for(lambda: has_game_buttons(left) or None, SAFETY)
        assert (await h.ui.table(table.id)).hands[ann.id] == left.message_id
        # the same button again: a refusal that says why
        data = SeatCb(game=table.id, op="back").pack()
        again = await ann.press(data=data, message=left, forged=True).wait_answer(SAFETY)
        assert again["text"] == "You are already playing your seat yourself."


async def answered(h: Harness, sent: Message, *, reply: bool = False) -> Message:
    """The bot's first message in ``sent``'s chat after it (``reply``: the one
    that replies to it), once the answers to it have all gone out."""
    world = h.fake.world

    def after() -> Message | None:
        return next(
            (
                m
                for m in world.messages(sent.chat)
                if m.from_id == world.bot.id
                and m.message_id > sent.message_id
                and (m.reply_to is sent or not reply)
            ),
            None,
        )

    found = await world.wait_for(after, SAFETY)
    await settle(h)
    return found


async def test_every_command_is_answered_below_it(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """#41 (the issue's Deliver): every command of the bot's menu, in a private
    chat and in a group, gets a new message below it in that chat -- /leave as a
    reply to it, whether he sits at a lobby, at a game or nowhere: its note
    mid-game edits his hand higher up, and a second /leave came of that."""
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        ann, bob = (fake.add_user(n, language_code="en") for n in ("Ann", "Bob"))
        ann.start()
        await ann.wait_message(timeout=SAFETY)
        group = ann.create_group("Card night", bob)
        ann.add_bot_to(group)
        await ann.wait_message(GREETING, group, timeout=SAFETY)
        menus = [
            (chat, [c["command"] for c in fake.world.commands_for(ann.user, chat)])
            for chat in (ann.chat, group)
        ]
        assert {"start", "help", "leave"} <= set(menus[0][1])
        assert "leave" in menus[1][1]
        said: dict[str, str] = {}
        for chat, commands in menus:
            for command in commands:
                sent = ann.send(f"/{command}", chat)
                answer = await answered(h, sent, reply=command == "leave")
                said[f"{chat.id}/{command}"] = answer.text or ""
        # /new seated him at a lobby in each chat, which /leave left
        assert said[f"{ann.chat.id}/leave"] == said[f"{group.id}/leave"] == "You left."
        for chat in (ann.chat, group):  # nowhere to leave
            sent = ann.send("/leave", chat)
            answer = await answered(h, sent, reply=True)
            assert answer.text == "You are not at any table now."
        # mid-game: the AI plays a solo game out, his hand above says so
        ann.send("/play chuvash")  # bare /play offers a choice (#41)
        hand = await ann.wait_message(has_game_buttons, timeout=SAFETY)
        sent = ann.send("/leave")
        answer = await answered(h, sent, reply=True)
        assert answer.text == "You left."
        assert hand.message_id < sent.message_id < answer.message_id
        assert "AI played the game" in (hand.text or "")
        for start in ("/start", "/help"):  # named by the issue, in the menus or not
            for chat in (ann.chat, group):
                await answered(h, ann.send(start, chat))


async def test_leave_a_solo_game_ends_it_without_a_way_back(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        ann = fake.add_user("Ann", language_code="en")
        ann.start()
        await ann.wait_message(timeout=SAFETY)
        ann.send("/play chuvash")
        hand = await ann.wait_message(has_game_buttons, timeout=SAFETY)
        ann.send("/leave")
        # the AI played it out: nothing to take back, and the way on said (#29)
        await fake.world.wait_for(lambda: "AI played the game" in (hand.text or "") or None, SAFETY)
        assert "/play" in (hand.text or "")
        await settle(h)
        assert not hand.buttons
        assert not [m for m in fake.messages(ann.chat) if "You left the game" in (m.text or "")]


async def test_rules_are_one_message_with_expandable_quotes(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        ann = fake.add_user("Ann", language_code="en")
        ann.start()
        await ann.wait_message(timeout=SAFETY)
        ann.send("/rules")
        rules = await ann.wait_message("Two games", timeout=SAFETY)
        await settle(h)
        assert [m for m in fake.messages(ann.chat) if "Chuvash Rooster" in (m.text or "")][
            -1
        ] is rules
        quotes = [e for e in rules.entities if e["type"] == "expandable_blockquote"]
        assert len(quotes) == 2
        text = rules.text or ""
        # it points at the quotes below, not at buttons it has not (#29)
        assert text.index("The full rules are below") < quotes[0]["offset"]
        assert not rules.buttons


async def test_top_is_only_in_the_group_menu_and_help(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False):
        ann = fake.add_user("Ann", language_code="en")
        group = ann.create_group("Card night")
        ann.add_bot_to(group)
        private = [c["command"] for c in fake.world.commands_for(ann.user, ann.chat)]
        in_group = [c["command"] for c in fake.world.commands_for(ann.user, group)]
        assert "top" not in private
        assert "top" in in_group
        assert "replay" in private  # and /replay works only in the private chat
        assert "replay" not in in_group
        ann.send("/top")  # typed anyway: it says where it works
        await ann.wait_message("send /top there", timeout=SAFETY)
        # /help names the commands that work where it is asked -- and, in the
        # private chat, where the group's own ones work (#41: /top and /arena
        # were the hardest to find)
        ann.send("/help")
        mine = await ann.wait_message("Play Chuvash Rooster", timeout=SAFETY)
        assert "/top there is the group's leaderboard" in (mine.text or "")
        assert "/replay" in (mine.text or "")
        assert "My cards" in (mine.text or "")  # both ways to see one's hand
        ann.send("/help", group)
        theirs = await ann.wait_message("Play Chuvash Rooster", group, timeout=SAFETY)
        assert "/top" in (theirs.text or "")
        assert "/replay" not in (theirs.text or "")


async def test_only_group_admins_change_its_language(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False):
        ann, bob = (fake.add_user(n, language_code="en") for n in ("Ann", "Bob"))
        group = ann.create_group("Card night", bob)  # Ann created it, Bob is a member
        ann.add_bot_to(group)
        await ann.wait_message(GREETING, group, timeout=SAFETY)
        bob.send("/lang uk", group)
        refused = await bob.wait_message("admins", group, timeout=SAFETY)
        assert refused.text == "Only the group's admins can change its language."
        bob.send("/lang", group)  # the keyboard: the same check
        keyboard = await bob.wait_message("Choose your language", group, timeout=SAFETY)
        answer = await bob.press("Українська", message=keyboard, chat=group).wait_answer(SAFETY)
        assert answer["text"] == "Only the group's admins can change its language."
        assert keyboard.text == "Choose your language:"  # refused: the prompt stays
        # a member whose Telegram speaks Ukrainian but who chose Russian: prompt
        # and refusal in one language, not one in each (#29)
        olha = fake.add_user("Olha", language_code="uk")
        olha.start()
        await olha.wait_message(timeout=SAFETY)
        olha.send("/lang ru")
        await olha.wait_message("Теперь язык — русский.", timeout=SAFETY)
        olha.join(group)
        olha.send("/lang", group)
        prompt = await olha.wait_message("Выберите язык:", group, timeout=SAFETY)
        answer = await olha.press("English", message=prompt, chat=group).wait_answer(SAFETY)
        assert answer["text"] == "Язык группы могут менять только её администраторы."
        bob.send("/help", group)
        await bob.wait_message("Play Chuvash Rooster", group, timeout=SAFETY)  # English
        ann.send("/lang uk", group)
        await ann.wait_message("Мова групи тепер українська.", group, timeout=SAFETY)
        ann.send("/help", group)
        await ann.wait_message("Грайте", group, timeout=SAFETY)
        # the group's menu speaks it too
        menu = {c["command"]: c["description"] for c in fake.world.commands_for(bob.user, group)}
        assert menu["rules"] == "Правила обох ігор"
        # an anonymous admin writes as the group (from: @GroupAnonymousBot, whom
        # getChatMember does not know as an admin): the group's own word counts
        with pytest.raises(PermissionError):
            bob.send_anonymously("/lang ru", group)  # only admins may stay anonymous
        sent = ann.send_anonymously("/lang ru", group)
        assert sent.to_api(fake.world.users)["from"]["username"] == "GroupAnonymousBot"
        await ann.wait_message("Язык группы теперь русский.", group, timeout=SAFETY)
        menu = {c["command"]: c["description"] for c in fake.world.commands_for(bob.user, group)}
        assert menu["rules"] == "Правила обеих игр"


async def test_lang_sets_the_private_command_menu(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False):
        ann = fake.add_user("Ann", language_code="ru")
        ann.start()
        await ann.wait_message(timeout=SAFETY)

        def menu() -> dict[str, str]:
            return {
                c["command"]: c["description"] for c in fake.world.commands_for(ann.user, ann.chat)
            }

        assert menu()["rules"] == "Правила обеих игр"
        ann.send("/lang uk")
        await ann.wait_message("українська", timeout=SAFETY)
        assert menu()["rules"] == "Правила обох ігор"
        assert "top" not in menu()


async def test_a_command_sent_as_the_group_seats_nobody(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """Anonymous admins of two groups type /new, then /leave: Telegram sends each
    from the one placeholder user, the same in every group.  Each is told to
    write as himself; the placeholder sits nowhere, so one group never blocks
    the other, and /lang as the group still works (review2: the placeholder
    owned a lobby nobody could start, and the second group was refused)."""
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        ann, bob, cy, dan = (
            fake.add_user(n, language_code="en") for n in ("Ann", "Bob", "Cy", "Dan")
        )
        first = ann.create_group("Ann's", bob)
        ann.add_bot_to(first)
        second = cy.create_group("Cy's", dan)
        cy.add_bot_to(second)
        await ann.wait_message("/new", first, timeout=SAFETY)
        await cy.wait_message("/new", second, timeout=SAFETY)
        ann.send_anonymously("/new chuvash", first)
        await ann.wait_message("as yourself", first, timeout=SAFETY)
        cy.send_anonymously(f"/new@{fake.world.bot.username}", second)
        await cy.wait_message("as yourself", second, timeout=SAFETY)
        cy.send_anonymously("/leave", second)
        said = await cy.wait_message("as yourself", second, timeout=SAFETY)
        assert said.reply_to is not None
        assert await h.svc.tables.where(fake.world.anonymous_admin.id) is None
        cy.send_anonymously("/lang ru", second)  # the group's own word still counts
        await cy.wait_message("Язык группы теперь русский.", second, timeout=SAFETY)
        # a person's /new in either group opens its lobby
        bob.start()
        await bob.wait_message(timeout=SAFETY)
        bob.send("/new chuvash", first)
        await bob.wait_message("Invitation link", first, timeout=SAFETY)
