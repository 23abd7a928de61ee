"""The ways into the Mini App (#42), pure: its page's URLs and links, the
button on a hand (``web_app`` in private, a link in the group) and on the
group's table message, their labels in every language, and the settings."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

import engine
from tables import PLAYING, Loaded, Seat, Table
from telegram_bot.buttons.moves import Selection
from telegram_bot.settings import Settings
from telegram_bot.state.chat_state import TableUi
from telegram_bot.state.snapshot import Snapshot
from telegram_bot.views.hand import hand_screen
from telegram_bot.views.i18n import LANGUAGES, Translator
from telegram_bot.views.keyboards import label_width, row_budget
from telegram_bot.views.miniapp import (
    MY_TABLES,
    OPEN_IN_APP,
    MiniApp,
    label,
    miniapp_of,
    open_table_screen,
)
from telegram_bot.views.table import table_screen, watch_screen

TID = "Tbl_-012345"
APP = MiniApp("https://durak.example.org/miniapp/", "table", "durak_bot")
NO_SHORT = MiniApp("https://durak.example.org/miniapp/", "", "durak_bot")


def snap(chat: int | None = -100_42) -> Snapshot:
    seats = (Seat(user=1, name="Ann"), Seat(user=2, name="Bob"))
    table = Table(
        id=TID, chat=chat, creator=1, variant="chuvash", options={}, max_seats=4,
        timer=0, seats=seats, status=PLAYING, game_no=1, seed=42,
    )  # fmt: skip
    state = engine.new_game("chuvash", 2, 42)
    loaded = Loaded(version=3, table=table, state=state, deadline=None, result=None)
    return Snapshot(loaded, TableUi(hands={1: 10, 2: -2}, group_lang="en"))


def buttons(markup: Any) -> list[dict[str, Any]]:
    rows = markup.inline_keyboard if markup is not None else []
    return [b.model_dump(exclude_none=True) for row in rows for b in row]


def test_the_pages_urls_and_links() -> None:
    assert APP.page() == "https://durak.example.org/miniapp/"
    assert APP.page(TID) == f"https://durak.example.org/miniapp/?t={TID}"
    kept = MiniApp("https://durak.example.org/app?lang=ru", "", "durak_bot")
    assert kept.page(TID) == f"https://durak.example.org/app?lang=ru&t={TID}"
    assert APP.direct_link(TID) == f"https://t.me/durak_bot/table?startapp={TID}"
    assert APP.group_link(TID) == APP.direct_link(TID)
    assert NO_SHORT.direct_link(TID) is None
    assert NO_SHORT.group_link(TID) == f"https://t.me/durak_bot?start=app_{TID}"
    assert miniapp_of("", "table", "durak_bot") is None  # off: no button anywhere
    assert miniapp_of(APP.url, "table", "durak_bot") == APP


def test_a_private_hand_opens_the_app_with_a_web_app_button() -> None:
    plain_text, plain = hand_screen(snap(), 0, "en", Selection())
    text, markup = hand_screen(snap(), 0, "en", Selection(), app=APP)
    assert text == plain_text
    assert buttons(markup)[:-1] == buttons(plain)  # one row more, the last
    assert markup is not None
    (last,) = markup.inline_keyboard[-1]
    assert last.web_app is not None
    assert last.web_app.url == APP.page(TID)
    assert last.text == "🎴 Card table"
    assert not any("web_app" in b for b in buttons(plain))  # the Mini App off: none


@pytest.mark.parametrize("app", [APP, NO_SHORT])
def test_a_hand_in_the_group_links_to_the_app(app: MiniApp) -> None:
    """A group refuses a ``web_app`` button (an ephemeral message is in the group)."""
    _text, markup = hand_screen(snap(), 1, "en", Selection(), app=app, in_group=True)
    assert markup is not None
    (last,) = markup.inline_keyboard[-1]
    assert last.web_app is None
    assert last.url == app.group_link(TID)
    assert not any("web_app" in b for b in buttons(markup))


@pytest.mark.parametrize("app", [APP, NO_SHORT])
def test_the_table_message_links_to_the_app(app: MiniApp) -> None:
    plain_text, plain = table_screen(snap(), "durak_bot")
    text, markup = table_screen(snap(), "durak_bot", app=app)
    assert text == plain_text
    assert buttons(markup)[:-1] == buttons(plain)
    assert markup is not None
    (last,) = markup.inline_keyboard[-1]
    assert last.url == app.group_link(TID)
    assert last.web_app is None


def test_a_spectators_private_view_opens_the_app() -> None:
    """A spectator's message is in his private chat: a ``web_app`` button."""
    plain_text, plain = watch_screen(snap(), "en")
    assert plain is None  # the Mini App off: as before
    text, markup = watch_screen(snap(), "en", NO_SHORT)
    assert text == plain_text
    assert markup is not None
    (row,) = markup.inline_keyboard
    assert [b.web_app.url if b.web_app else None for b in row] == [NO_SHORT.page(TID)]


def test_the_deep_links_answer_carries_the_web_app_button() -> None:
    text, markup = open_table_screen(NO_SHORT, TID, Translator("en"))
    assert text == "🎴 " + OPEN_IN_APP
    (button,) = markup.inline_keyboard[0]
    assert button.web_app is not None
    assert button.web_app.url == NO_SHORT.page(TID)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_labels_in_every_language_fit_a_phone(lang: str) -> None:
    _ = Translator(lang)
    for text in (label(_), _(MY_TABLES)):
        assert label_width(text) <= row_budget(1), text
    if lang != "en":
        assert _(MY_TABLES) != MY_TABLES
        assert _(OPEN_IN_APP) != OPEN_IN_APP


def test_settings_want_an_https_url_and_a_short_name() -> None:
    base: dict[str, Any] = {"bot_token": "1:x", "redis_url": "redis://localhost"}
    ok = Settings(
        **base, miniapp_url="https://durak.example.org/miniapp/", miniapp_short_name="table"
    )
    assert (ok.miniapp_url, ok.miniapp_short_name) == (
        "https://durak.example.org/miniapp/",
        "table",
    )
    assert Settings(**base).miniapp_url == ""  # off by default
    fake = {**base, "telegram_api_url": "http://127.0.0.1:9000"}
    assert Settings(**fake, miniapp_url="http://127.0.0.1:8080/miniapp/").miniapp_url
    for bad in (
        {"miniapp_url": "http://durak.example.org/miniapp/"},  # Telegram wants HTTPS
        {"miniapp_url": "http://127.0.0.1:8080/miniapp/"},  # loopback: the fake's only
        {"miniapp_url": "durak.example.org"},
        {"miniapp_short_name": "a-b"},  # BotFather: letters, digits, underscores
        {"miniapp_short_name": "ab"},
    ):
        with pytest.raises(ValidationError):
            Settings.model_validate({**base, **bad})
