"""Watch, replay and verify end to end (issue #16), the real bot against the fake
Bot API: the commitment the group's table message shows at the start matches
the seed revealed at the end; *Replay* shows the right state at step 0, at
step k and at the last step, ◀ ▶ ⏭ move through it, /replay lists the game, an
expired record gets a clear answer; no hidden card before the replay."""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import AsyncIterator

import pytest

from engine import card_names
from engine.ai import LEVEL_OF
from engine.fairness import commitment
from engine.verify import record_states, verify
from sandbox.fake_api import FakeTelegram, Message, RateLimits, SimUser
from telegram_bot.views.keyboards import label_width, row_budget
from tests.bot.e2e_group_kit import group_lobby
from tests.bot.e2e_kit import SAFETY, Harness, assert_no_hidden_cards, cards_in, play_out, running

HEX = re.compile(r"\b[0-9a-f]{64}\b")


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


def hands_shown(text: str, names: list[str]) -> list[set[str]]:
    """The cards of each name's line in a replay's *Hands* section."""
    section = text.split("Hands", 1)[1].split("Key of the deal", 1)[0]
    lines = {line.split(":", 1)[0].strip(): line for line in section.splitlines() if ":" in line}
    return [cards_in(lines[n].split(":", 1)[1]) for n in names]


async def step_to(h: Harness, user: SimUser, msg: Message, label: str, want: str) -> Message:
    answer = await user.press(label, message=msg).wait_answer(SAFETY)
    assert answer.get("text") is None, answer
    await h.fake.world.wait_for(lambda: want in (msg.text or "") or None, SAFETY)
    return msg


@pytest.mark.slow
async def test_commitment_seed_and_replay(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        humans = [fake.add_user(f"P{i}", language_code="en") for i in range(2)]
        member = fake.add_user("Member", language_code="en")  # in the group, not playing
        tid, group = await group_lobby(h, "chuvash", humans, 1, watchers=[member])
        table, _s, _v = await h.svc.tables.get(tid)
        first = await fake.world.wait_for(
            lambda: next(
                (
                    e
                    for e in fake.world.outbox
                    if e["chat_id"] == group.id and "Fair deal" in (e["text"] or "")
                ),
                None,
            ),
            SAFETY,
        )
        shown = HEX.findall(first["text"])
        assert len(shown) == 1, first["text"]
        assert "Fair deal" in first["text"]
        await play_out(h, tid, humans, rng=random.Random(16))
        checked = await assert_no_hidden_cards(h, tid, humans)
        assert checked > 10
        msgs = fake.messages(group)
        final = await fake.world.wait_for(
            lambda: next((m for m in msgs if "🔎 Check the deal" in m.button_texts), None), SAFETY
        )
        # the result carries no command line: the details are behind the button
        # (#29); the fingerprint, the one shown at the start, is in it (#41)
        assert "python" not in (final.text or "")
        assert HEX.findall(final.text or "") == shown
        p0 = humans[0]
        answer = await p0.press("🔎 Check the deal", message=final, chat=group).wait_answer(SAFETY)
        assert not answer.get("show_alert"), answer
        assert "private chat" in (answer.get("text") or "")
        check = await p0.wait_message("Check the deal", timeout=SAFETY)
        text = check.text or ""
        seed = int(re.search(r"Key of the deal: (\d+)", text).group(1))  # type: ignore[union-attr]
        assert commitment(seed, "chuvash", 3, table.options) == shown[0]
        assert verify(seed, shown[0], "chuvash", 3)["ok"]
        command = f"python -m engine verify {seed} {shown[0]} --variant chuvash --players 3"
        assert text.splitlines()[-1] == command  # no Shchelkovsky options for a Chuvash game
        assert "fingerprint" in text
        # a member who never opened the private chat: the key in a short answer
        answer = await member.press("🔎 Check the deal", message=final, chat=group).wait_answer(
            SAFETY
        )
        assert str(seed) in (answer.get("text") or ""), answer

        # the replay, from the group's table message: sent to the presser in private
        answer = await p0.press("🎞 Replay", message=final, chat=group).wait_answer(SAFETY)
        assert "private chat" in (answer.get("text") or "")
        msg = await p0.wait_message("Replay", timeout=SAFETY)
        record = await h.svc.replays.record(tid, 1)
        states = record_states(record)
        # a step is a move that is not a pass, with the passes after it (#29)
        moves = [i for i, a in enumerate(record["actions"]) if a["type"] != "pass"]
        ends = [0, *moves[1:], len(record["actions"])]  # step k: states[ends[k]]
        last = len(moves)
        # an AI seat says its level (#29): «AI 1 (normal)»
        names = [
            str(n) if u is not None else f"{n} ({LEVEL_OF[kind]})"
            for (u, n), kind in zip(record["seats"], record["ai"], strict=True)
        ]

        def expect(k: int) -> list[set[str]]:
            return [set(card_names(states[ends[k]].hand(s))) for s in range(3)]

        assert f"move 0 of {last}" in (msg.text or "")
        assert hands_shown(msg.text or "", names) == expect(0)
        assert [set(h) for h in record["hands"]] == expect(0)
        k = 3
        for i in range(1, k + 1):
            await step_to(h, p0, msg, "▶", f"move {i} of {last}")
        assert hands_shown(msg.text or "", names) == expect(k)
        await step_to(h, p0, msg, "◀", f"move {k - 1} of {last}")
        assert hands_shown(msg.text or "", names) == expect(k - 1)
        await step_to(h, p0, msg, "⏩", f"move {last} of {last}")
        assert hands_shown(msg.text or "", names) == expect(last)
        await step_to(h, p0, msg, "⏪", f"move 0 of {last}")
        await step_to(h, p0, msg, "⏭", "bout 2 of")  # the first move of the second bout
        assert "move 0 of" not in (msg.text or "")

        # a member of the group who did not play: every hand would show -- refused
        member.start()
        await member.wait_message(timeout=SAFETY)
        seen = len(member.messages())
        answer = await member.press("🎞 Replay", message=final, chat=group).wait_answer(SAFETY)
        assert answer["show_alert"], answer
        assert "Only the game's players" in (answer.get("text") or ""), answer
        assert len(member.messages()) == seen  # no replay sent to him

        # /replay lists the game; another player opens it from there
        p1 = humans[1]
        p1.send("/replay")
        listing = await p1.wait_message("Your recent games", timeout=SAFETY)
        # the game's mark, the time in UTC and saying so, the players: whole on a
        # phone (#29)
        entry = listing.button_texts[0]
        assert entry.startswith("🐓 "), entry
        assert " UTC · " in entry, entry
        assert "P0, P1" in entry, entry
        assert label_width(entry) <= row_budget(1)
        await p1.press(listing.button_texts[0], message=listing).wait_answer(SAFETY)
        mine = await p1.wait_message("move 0 of", timeout=SAFETY)
        assert hands_shown(mine.text or "", names) == expect(0)

        # an expired record: a clear answer, nothing changes
        await h.svc.store.one(lambda p: p.delete(h.svc.keys.record(tid, 1)))
        before = msg.text
        answer = await p0.press("▶", message=msg).wait_answer(SAFETY)
        assert "no longer kept" in (answer.get("text") or "")
        assert msg.text == before
    # one refusal, expected: the check sent to the member who had not started the bot
    assert fake.stats.errors == Counter({("sendMessage", 403): 1}), fake.stats.errors
