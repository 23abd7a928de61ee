"""A replay's screen (#29): an AI seat says its level, and a step tells how
many passes it carries."""

from __future__ import annotations

import random

from engine.ai import LEVELS
from engine.replay import replay_step
from telegram_bot.views.replay import render_replay
from tests.engine.test_records import played


def test_the_replay_names_the_ai_level_and_counts_the_passes() -> None:
    seed = random.randrange(2**62)
    print("seed", seed)
    record, _final = played("shchelkovsky", 3, seed)
    record = {
        **record,
        "table": "T1",
        "game": 1,
        "seats": [[7, "Ann"], [None, "AI 1"], [None, "AI 2"]],
        "ai": [None, LEVELS["hard"], LEVELS["easy"]],
    }
    deal = render_replay(replay_step(record, 0), locale="en")[0]
    assert "AI 1 (hard)" in deal
    assert "AI 2 (easy)" in deal
    assert "(сложный)" in render_replay(replay_step(record, 0), locale="ru")[0]
    end = replay_step(record, 10**6)
    k = next(k for k in range(1, end.last + 1) if replay_step(record, k).passes)
    step = replay_step(record, k)
    assert f"passes: {step.passes}" in render_replay(step, locale="en")[0]
    assert f"пасов: {step.passes}" in render_replay(step, locale="ru")[0]
    old = {k: v for k, v in record.items() if k != "ai"}  # a record kept before #29
    assert "(hard)" not in render_replay(replay_step(old, 0), locale="en")[0]


def test_the_replay_says_what_each_row_of_arrows_does() -> None:
    """#41: ⏮ ◀ ▶ ⏭ over ⏪ 0/74 ⏩ were hard to tell apart: the message's last
    line, just above them, names each pair, in every language."""
    from telegram_bot.views.i18n import LANGUAGES, Translator
    from telegram_bot.views.replay import REPLAY_LEGEND

    record, _final = played("chuvash", 3, 41)
    record = {**record, "table": "T1", "game": 1, "seats": [[7, "Ann"], [8, "Bob"], [9, "Cy"]]}
    for locale in LANGUAGES:
        text, keyboard = render_replay(replay_step(record, 3), locale=locale)
        legend = text.splitlines()[-1]
        assert legend == Translator(locale)(REPLAY_LEGEND)
        for row in keyboard.inline_keyboard:
            for arrow in (b.text for b in row if "/" not in b.text):
                assert arrow in legend


def test_a_step_counts_its_passes_in_words_not_with_a_button_s_arrow() -> None:
    """#41 (sandbox journeys): «👉 AI 1 takes · ⏭×1» -- ⏭ is also the button just
    below that skips a bout; the step's line names no arrow of the keyboard."""
    from telegram_bot.views.i18n import LANGUAGES

    record, _final = played("shchelkovsky", 3, 41)
    record = {**record, "table": "T1", "game": 1, "seats": [[7, "Ann"], [8, "Bob"], [9, "Cy"]]}
    end = replay_step(record, 10**6)
    k = next(k for k in range(1, end.last + 1) if replay_step(record, k).passes)
    for locale in LANGUAGES:
        text, keyboard = render_replay(replay_step(record, k), locale=locale)
        [what] = [line for line in text.splitlines() if line.startswith("👉")]
        arrows = {b.text for row in keyboard.inline_keyboard for b in row if "/" not in b.text}
        assert not [a for a in arrows if a in what], (locale, what)


def test_every_replay_button_moves_somewhere() -> None:
    """#41 (sandbox journeys): the «4/96» button between ⏪ and ⏩ pointed at the
    step shown: pressed, nothing happened. From a step in the middle every
    button leads to another step (the head already says «move 4 of 96»)."""
    from telegram_bot.buttons.callbacks import ReplayCb

    record, _final = played("chuvash", 3, 41)
    record = {**record, "table": "T1", "game": 1, "seats": [[7, "Ann"], [8, "Bob"], [9, "Cy"]]}
    end = replay_step(record, 10**6)
    step = replay_step(record, end.last // 2)
    _text, keyboard = render_replay(step, locale="en")
    for row in keyboard.inline_keyboard:
        for b in row:
            assert b.callback_data is not None
            assert ReplayCb.unpack(b.callback_data).step != step.step, b.text
