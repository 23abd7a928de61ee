"""Bot API methods answering users' queries: callback buttons and inline mode."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from sandbox.fake_api.errors import BotApiError
from sandbox.fake_api.params import CallParams
from sandbox.fake_api.registry import method
from sandbox.fake_api.text import check_private_only, check_text, parse_reply_markup, parse_text
from sandbox.fake_api.world import World

QUERY_INVALID = "Bad Request: query is too old and response timeout expired or query ID is invalid"
MAX_ALERT = 200
MAX_INLINE_RESULTS = 50


@method("answerCallbackQuery")
async def answer_callback_query(world: World, p: CallParams) -> Any:
    query = world.callback_queries.get(p.req_string("callback_query_id"))
    if query is None or query.answer is not None:
        raise BotApiError(400, QUERY_INVALID)
    if world.clock() - query.pressed_at > world.callback_answer_window:
        world.stats.late_answers += 1
        raise BotApiError(400, QUERY_INVALID)
    text = p.string("text")
    if text is not None and len(text) > MAX_ALERT:
        raise BotApiError(400, "Bad Request: MESSAGE_TOO_LONG")
    url = p.string("url") or None
    if url is not None and not _is_start_link(world, url):
        # Telegram opens only game URLs and t.me/<this bot>?start=... links.
        raise BotApiError(400, "Bad Request: URL_INVALID")
    query.answer = {
        "text": text,
        "show_alert": p.boolean("show_alert"),
        "url": url,
        "cache_time": p.integer("cache_time", 0),
    }
    query.answered.set()
    world.touch(
        "callback_answered",
        chat_id=query.message.chat_id,
        message_id=query.message.message_id,
        user_id=query.user_id,
        detail={"query_id": query.id, **query.answer},
    )
    return True


def _is_start_link(world: World, url: str) -> bool:
    parts = urlsplit(url if "://" in url else f"https://{url}")
    return (
        parts.hostname in ("t.me", "telegram.me")
        and parts.path.strip("/").lower() == (world.bot.username or "").lower()
    )


def _check_result(result: Any, seen: set[str]) -> None:
    if not isinstance(result, dict) or "type" not in result:
        raise BotApiError(400, "Bad Request: RESULT_TYPE_INVALID")
    result_id = result.get("id")
    if not isinstance(result_id, str) or not 1 <= len(result_id.encode()) <= 64:
        raise BotApiError(400, "Bad Request: RESULT_ID_INVALID")
    if result_id in seen:
        raise BotApiError(400, "Bad Request: RESULT_ID_DUPLICATE")
    seen.add(result_id)
    if "reply_markup" in result:  # an inline message may go to any chat: no web_app (#42)
        check_private_only(parse_reply_markup(result["reply_markup"]), private=False)
    content = result.get("input_message_content")
    if result["type"] == "article":
        if not result.get("title"):
            raise BotApiError(400, "Bad Request: RESULT_TITLE_EMPTY")
        if not isinstance(content, dict):
            raise BotApiError(400, "Bad Request: MESSAGE_EMPTY")
    if isinstance(content, dict) and "message_text" in content:
        plain, _ = parse_text(str(content["message_text"]), content.get("parse_mode"))
        check_text(plain)


@method("answerInlineQuery")
async def answer_inline_query(world: World, p: CallParams) -> Any:
    query = world.inline_queries.get(p.req_string("inline_query_id"))
    if query is None or query.results is not None:
        raise BotApiError(400, QUERY_INVALID)
    results = p.json("results")
    if not isinstance(results, list):
        raise BotApiError(400, "Bad Request: results must be an array")
    if len(results) > MAX_INLINE_RESULTS:
        raise BotApiError(400, "Bad Request: RESULTS_TOO_MUCH")
    seen: set[str] = set()
    for result in results:
        _check_result(result, seen)
    query.results = results
    query.answer = {
        "cache_time": p.integer("cache_time", 300),
        "is_personal": p.boolean("is_personal"),
        "next_offset": p.string("next_offset", ""),
        "button": p.json("button"),
    }
    query.answered.set()
    world.touch(
        "inline_answered",
        user_id=query.user_id,
        detail={
            "query_id": query.id,
            "results": [
                {"id": r["id"], "title": r.get("title"), "description": r.get("description")}
                for r in results
            ],
        },
    )
    return True
