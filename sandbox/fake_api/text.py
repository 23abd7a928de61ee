"""Message text and inline keyboards as Telegram checks them.

HTML (``parse_mode=HTML``) becomes plain text plus entities, as Telegram stores it;
offsets and lengths count UTF-16 code units, as in the Bot API.

Choices where the Bot API text leaves room (the strict reading each time):

- ``<tg-time unix="…" format="…">`` (a ``date_time`` entity): ``unix`` is required
  and must be a whole number from 0 to now + 1098 days (MTProto's documented range
  for ``messageEntityFormattedDate``); ``format`` is optional and must match
  ``r|w?[dD]?[tT]?`` in that order (relative alone; else day of week, then date,
  then time); a format in another order is refused rather than reordered. Without
  ``format`` the entity has no ``date_time_format`` (clients show the text as is).
  The same checks apply to a ``date_time`` entity given in an ``entities`` array.
- Inline buttons: ``style`` is one of "danger", "success", "primary" (anything else:
  ``BUTTON_STYLE_INVALID``). "Exactly one of the fields other than text,
  icon_custom_emoji_id and style" is enforced, so ``disabled`` (a DisabledButton,
  an empty object) is a button type of its own and carries no callback data, URL
  or other action (``BUTTON_TYPE_INVALID`` otherwise).
- ``web_app`` buttons (#42): "Available only in private chats between a user and
  the bot" -- a message to a group or supergroup carrying one, an ephemeral
  message (always in a group), an inline result and an edit of an inline
  message are refused with ``BUTTON_TYPE_INVALID`` (what Telegram answers).
  The ``WebAppInfo``'s ``url`` must be HTTPS ("An HTTPS URL of a Web App");
  the fake also takes ``http://`` on loopback, where the sandbox serves the
  Mini App (``BUTTON_URL_INVALID`` otherwise).
"""

from __future__ import annotations

import json
import re
import time
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urlsplit

from sandbox.fake_api.errors import BotApiError

LOOPBACK = ("127.0.0.1", "localhost", "::1")
MAX_TEXT = 4096
MAX_CALLBACK_DATA = 64
MAX_ROW = 8
MAX_BUTTONS = 100
BUTTON_ACTIONS = (
    "callback_data",
    "url",
    "switch_inline_query",
    "switch_inline_query_current_chat",
    "switch_inline_query_chosen_chat",
    "callback_game",
    "pay",
    "login_url",
    "web_app",
    "copy_text",
    "disabled",
)
BUTTON_STYLES = frozenset({"danger", "success", "primary"})
DATE_TIME_FORMAT = re.compile(r"r|w?[dD]?[tT]?")
MAX_FUTURE_DAYS = 1098

_SIMPLE_TAGS = {
    "b": "bold",
    "strong": "bold",
    "i": "italic",
    "em": "italic",
    "u": "underline",
    "ins": "underline",
    "s": "strikethrough",
    "strike": "strikethrough",
    "del": "strikethrough",
    "tg-spoiler": "spoiler",
    "code": "code",
    "pre": "pre",
    "blockquote": "blockquote",
    "a": "text_link",
    "span": "spoiler",
    "tg-emoji": "custom_emoji",
    "tg-time": "date_time",
}


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


_NAMED_ENTITIES = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}
"""The only named entities Telegram supports (every numerical one is)."""


def _unparsable(reason: str) -> BotApiError:
    return BotApiError(400, f"Bad Request: can't parse entities: {reason}")


def date_time_fields(unix: object, date_format: object) -> dict[str, Any]:
    """``unix_time`` and ``date_time_format`` of a date_time entity, checked."""
    if isinstance(unix, str) and re.fullmatch(r"[0-9]{1,12}", unix):
        unix = int(unix)
    if isinstance(unix, bool) or not isinstance(unix, int):
        raise _unparsable('date_time entity needs a Unix time (unix="<seconds>")')
    if not 0 <= unix <= int(time.time()) + MAX_FUTURE_DAYS * 86400:
        raise _unparsable(f"Unix time {unix} is out of the allowed range")
    fields: dict[str, Any] = {"unix_time": unix}
    if date_format is not None:
        if not isinstance(date_format, str) or not DATE_TIME_FORMAT.fullmatch(date_format):
            raise _unparsable(f"Invalid date_time format {date_format!r}")
        fields["date_time_format"] = date_format
    return fields


def check_entities(entities: list[Any]) -> list[dict[str, Any]]:
    """An ``entities`` array given instead of a parse mode: each one an object with a
    type, offset and length; ``date_time`` ones are checked like ``<tg-time>``."""
    checked: list[dict[str, Any]] = []
    for entity in entities:
        if not isinstance(entity, dict) or not isinstance(entity.get("type"), str):
            raise BotApiError(400, "Bad Request: can't parse entities JSON object")
        if entity["type"] == "date_time":
            entity = {
                **entity,
                **date_time_fields(entity.get("unix_time"), entity.get("date_time_format")),
            }
        checked.append(entity)
    return checked


class _TelegramHTML(HTMLParser):
    """Telegram's HTML: the supported tags only, and every ``<`` and ``&`` that is
    not part of a tag or an entity refused (the Bot API says they must be
    escaped as ``&lt;`` and ``&amp;``)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.parts: list[str] = []
        self.length = 0  # UTF-16 units so far
        self.entities: list[dict[str, Any]] = []
        self.stack: list[tuple[str, int, dict[str, Any]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in _SIMPLE_TAGS:
            raise BotApiError(
                400, f'Bad Request: can\'t parse entities: Unsupported start tag "{tag}"'
            )
        attributes = {name: value or "" for name, value in attrs}
        entity: dict[str, Any] = {"type": _SIMPLE_TAGS[tag]}
        if tag == "a":
            href = attributes.get("href", "")
            if href.startswith("tg://user?id="):
                entity = {"type": "text_mention", "user_id": href.removeprefix("tg://user?id=")}
            else:
                entity["url"] = href
        elif tag == "span" and attributes.get("class") != "tg-spoiler":
            raise BotApiError(
                400, 'Bad Request: can\'t parse entities: Unsupported start tag "span"'
            )
        elif tag == "blockquote" and "expandable" in attributes:
            entity["type"] = "expandable_blockquote"
        elif tag == "tg-emoji":
            entity["custom_emoji_id"] = attributes.get("emoji-id", "")
        elif tag == "tg-time":
            entity.update(date_time_fields(attributes.get("unix"), attributes.get("format")))
        elif tag == "code" and self.stack and self.stack[-1][0] == "pre":
            language = attributes.get("class", "").removeprefix("language-")
            if language:
                self.stack[-1][2]["language"] = language
            self.stack.append((tag, self.length, {}))  # merged into the enclosing pre
            return
        self.stack.append((tag, self.length, entity))

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1][0] != tag:
            raise BotApiError(400, f'Bad Request: can\'t parse entities: Unmatched end tag "{tag}"')
        _, start, entity = self.stack.pop()
        if entity and self.length > start:
            self.entities.append({**entity, "offset": start, "length": self.length - start})

    def handle_data(self, data: str) -> None:
        if "<" in data:
            raise _unparsable('Unsupported start tag (a bare "<" must be written &lt;)')
        if "&" in data:
            raise _unparsable('Character entity expected (a bare "&" must be written &amp;)')
        self._text(data)

    def handle_entityref(self, name: str) -> None:
        if name not in _NAMED_ENTITIES:
            raise _unparsable(f'Unsupported HTML entity "&{name};"')
        self._text(_NAMED_ENTITIES[name])

    def handle_charref(self, name: str) -> None:
        try:
            code = int(name[1:], 16) if name[:1] in "xX" else int(name)
            char = chr(code)
        except (ValueError, OverflowError):
            raise _unparsable(f'Invalid numeric entity "&#{name};"') from None
        self._text(char)

    def _text(self, data: str) -> None:
        self.parts.append(data)
        self.length += utf16_len(data)


def parse_text(text: str, parse_mode: str | None) -> tuple[str, list[dict[str, Any]]]:
    """Return (plain text, entities) for ``text`` sent with ``parse_mode``."""
    if (parse_mode or "").upper() != "HTML":
        return text, []
    parser = _TelegramHTML()
    parser.feed(text)
    parser.close()
    if parser.stack:
        tag = parser.stack[-1][0]
        raise BotApiError(
            400,
            f"Bad Request: can't parse entities: Can't find end tag corresponding to start tag \"{tag}\"",
        )
    entities = sorted(parser.entities, key=lambda e: (e["offset"], -e["length"]))
    return "".join(parser.parts), entities


def check_text(plain: str) -> None:
    if not plain.strip():
        raise BotApiError(400, "Bad Request: message text is empty")
    if utf16_len(plain) > MAX_TEXT:
        raise BotApiError(400, "Bad Request: message is too long")


def command_entities(text: str) -> list[dict[str, Any]]:
    """``bot_command`` entity for a text that starts with ``/command``."""
    if not text.startswith("/"):
        return []
    command = text.split(maxsplit=1)[0] if text.strip() else text
    if len(command) < 2:
        return []
    return [{"type": "bot_command", "offset": 0, "length": utf16_len(command)}]


def parse_reply_markup(raw: Any) -> dict[str, Any] | None:
    """Decode and validate ``reply_markup`` (a JSON string in form data)."""
    if raw is None or raw == "":
        return None
    markup = raw
    if isinstance(raw, str):
        try:
            markup = json.loads(raw)
        except ValueError:
            raise BotApiError(
                400, "Bad Request: can't parse reply keyboard markup JSON object"
            ) from None
    if not isinstance(markup, dict):
        raise BotApiError(400, "Bad Request: can't parse reply keyboard markup JSON object")
    if "inline_keyboard" in markup:
        check_inline_keyboard(markup["inline_keyboard"])
    return markup


def check_inline_keyboard(rows: Any) -> None:
    if not isinstance(rows, list) or not all(isinstance(row, list) for row in rows):
        raise BotApiError(400, 'Bad Request: field "inline_keyboard" must be an Array of Arrays')
    total = 0
    for row in rows:
        if len(row) > MAX_ROW:
            # Telegram itself accepts the row and its apps hide the extra buttons;
            # the fake refuses it so that the bot never sends one.
            raise BotApiError(400, "Bad Request: too many buttons in a row (at most 8 are shown)")
        total += len(row)
        for button in row:
            check_button(button)
    if total > MAX_BUTTONS:
        raise BotApiError(400, "Bad Request: reply markup is too long")


def check_button(button: Any) -> None:
    if not isinstance(button, dict) or not isinstance(button.get("text"), str):
        raise BotApiError(400, 'Bad Request: can\'t find field "text"')
    actions = [key for key in BUTTON_ACTIONS if key in button]
    if not actions:
        raise BotApiError(400, "Bad Request: text buttons are unallowed in the inline keyboard")
    if len(actions) > 1:  # "exactly one of the fields other than text, ... and style"
        raise BotApiError(400, "Bad Request: BUTTON_TYPE_INVALID")
    if "style" in button and button["style"] not in BUTTON_STYLES:
        raise BotApiError(400, "Bad Request: BUTTON_STYLE_INVALID")
    if "disabled" in button and button["disabled"] != {}:
        raise BotApiError(400, "Bad Request: BUTTON_TYPE_INVALID")
    if "callback_data" in button:
        data = button["callback_data"]
        if not isinstance(data, str) or not 1 <= len(data.encode()) <= MAX_CALLBACK_DATA:
            raise BotApiError(400, "Bad Request: BUTTON_DATA_INVALID")
    if "url" in button:
        url = button["url"]
        if not isinstance(url, str) or not url.startswith(("http://", "https://", "tg://")):
            raise BotApiError(400, "Bad Request: BUTTON_URL_INVALID")
    if "web_app" in button:
        app = button["web_app"]
        if not isinstance(app, dict) or not check_web_app_url(app.get("url")):
            raise BotApiError(400, "Bad Request: BUTTON_URL_INVALID")
    if not button["text"].strip():
        raise BotApiError(400, "Bad Request: BUTTON_TEXT_INVALID")


def check_web_app_url(url: Any) -> bool:
    """A Mini App's URL as the fake takes it: HTTPS, or HTTP on loopback (the
    sandbox's own Mini App)."""
    if not isinstance(url, str):
        return False
    parts = urlsplit(url)
    if parts.scheme == "https":
        return bool(parts.hostname)
    return parts.scheme == "http" and parts.hostname in LOOPBACK


def check_private_only(markup: dict[str, Any] | None, *, private: bool) -> None:
    """``web_app`` buttons only in a private chat with the bot (#42)."""
    if not private and any("web_app" in button for button in iter_buttons(markup)):
        raise BotApiError(400, "Bad Request: BUTTON_TYPE_INVALID")


def callback_data_of(button: dict[str, Any]) -> str:
    """What pressing ``button`` sends, or why it sends nothing (a disabled button
    "does nothing": no callback query at all)."""
    if "disabled" in button:
        raise ValueError(f"button {button['text']!r} is disabled: pressing it sends nothing")
    if "callback_data" not in button:
        raise ValueError(f"button {button['text']!r} is not a callback button: {button}")
    return str(button["callback_data"])


def iter_buttons(markup: dict[str, Any] | None) -> list[dict[str, Any]]:
    if not markup:
        return []
    return [button for row in markup.get("inline_keyboard", []) for button in row]
