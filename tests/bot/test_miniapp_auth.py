"""The Mini App's init data (#42): only what Telegram signed for this bot,
recently, is a user; a forged signature, another bot's token, a stale
``auth_date`` or another user's id put in are refused."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode

import pytest

from telegram_bot.miniapp.auth import InitDataRefused, check_init_data, sign_init_data

TOKEN = "123456:AAbbccddeeffgghhiijjkkllmmnnooppqq"
NOW = 1_800_000_000.0
DAY = 86_400.0


def fields(**extra: object) -> dict[str, object]:
    user = {"id": 42, "first_name": "Ann", "last_name": "<b>Lee</b>", "language_code": "uk"}
    return {"auth_date": int(NOW) - 60, "query_id": "AAH", "user": user, **extra}


def check(init_data: str, max_age: float = DAY) -> object:
    return check_init_data(TOKEN, init_data, max_age=max_age, now=NOW)


def test_telegrams_signature_proves_the_user() -> None:
    user = check_init_data(
        TOKEN, sign_init_data(TOKEN, fields(start_param="abc")), max_age=DAY, now=NOW
    )
    assert (user.id, user.name, user.language, user.start_param) == (
        42,
        "Ann <b>Lee</b>",
        "uk",
        "abc",
    )


def test_a_forged_signature_is_refused() -> None:
    signed = dict(parse_qsl(sign_init_data(TOKEN, fields())))
    signed["hash"] = "0" * 64
    with pytest.raises(InitDataRefused) as refused:
        check(urlencode(signed))
    assert refused.value.reason == "signature"


def test_another_bots_token_is_refused() -> None:
    with pytest.raises(InitDataRefused) as refused:
        check(sign_init_data("654321:ZZyyxxwwvvuuttssrrqqppoonnmmllkkjj", fields()))
    assert refused.value.reason == "signature"


def test_a_stale_auth_date_is_refused() -> None:
    stale = fields(auth_date=int(NOW - DAY) - 1)
    with pytest.raises(InitDataRefused) as refused:
        check(sign_init_data(TOKEN, stale))
    assert refused.value.reason == "stale"
    assert check(sign_init_data(TOKEN, stale), max_age=2 * DAY)  # younger than allowed


def test_an_auth_date_from_the_future_is_refused() -> None:
    with pytest.raises(InitDataRefused):
        check(sign_init_data(TOKEN, fields(auth_date=int(NOW) + 3600)))


def test_another_users_id_put_in_is_refused() -> None:
    signed = dict(parse_qsl(sign_init_data(TOKEN, fields())))
    signed["user"] = signed["user"].replace('"id":42', '"id":43')
    assert '"id":43' in signed["user"]
    with pytest.raises(InitDataRefused) as refused:
        check(urlencode(signed))
    assert refused.value.reason == "signature"


@pytest.mark.parametrize(
    "init_data",
    # a non-ASCII hash made compare_digest raise TypeError: a 500 (hostile review)
    ["", "hash=1", "user=1&auth_date=2", "%%%", "x" * 5000, "auth_date=1&hash=%C3%A9"],
)
def test_nonsense_is_refused(init_data: str) -> None:
    with pytest.raises(InitDataRefused):
        check(init_data)


def test_init_data_without_a_user_is_refused() -> None:
    with pytest.raises(InitDataRefused) as refused:
        check(sign_init_data(TOKEN, {"auth_date": int(NOW), "chat_instance": "1"}))
    assert refused.value.reason == "no_user"
