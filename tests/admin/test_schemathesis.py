"""Schemathesis against the app's own OpenAPI document, over every operation:
positive and negative examples, with the admin token, and once more with the
ids of a real game; then with the read-only token, no token and a wrong token
(a few examples each in the fast lane, more under ``slow``); no 5xx, and every
response conforms to the document (status code, content type, headers, body
schema)."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlsplit

import pytest
import schemathesis
from flask import Flask
from flask_openapi3.openapi import OpenAPI
from hypothesis import HealthCheck, given
from requests.structures import CaseInsensitiveDict
from schemathesis import checks
from schemathesis.core.result import Err
from schemathesis.generation import GenerationMode

from tables import SyncTableService
from tests.admin.conftest import ADMIN, READER, new_table
from tests.profiles import budget

CONFORMANCE = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_headers_conformance,
    checks.response_schema_conformance,
]
EXAMPLES = 0.12  # a share of the profile's examples per operation (tests/profiles.py)
FEW = 0.03
Operation = schemathesis.APIOperation[Any, Any, Any, Any]


def run_operations(
    app: Flask,
    mode: GenerationMode,
    path_parameters: dict[str, Any] | None = None,
    *,
    token: str | None = ADMIN,
    share: float = EXAMPLES,
) -> list[tuple[str, int]]:
    """Run every operation (``token``: the bearer token sent, None: none);
    returns each response's operation label and status."""
    schema = schemathesis.openapi.from_wsgi("/openapi/openapi.json", app)
    seen: list[tuple[str, int]] = []
    current = [""]  # the label of the operation being run
    extra = [checks.negative_data_rejection] if mode == GenerationMode.NEGATIVE else []
    for result in schema.get_all_operations():
        if isinstance(result, Err):
            raise result.err()  # our own document has an invalid operation
        op = result.ok()
        params = {
            k: v
            for k, v in (path_parameters or {}).items()
            if any(p.name == k for p in op.path_parameters)
        }
        if path_parameters and not params:
            continue
        inputs = [op.path_parameters, op.query, op.headers, op.body]
        if mode == GenerationMode.NEGATIVE and not any(len(x) for x in inputs):
            continue  # nothing to make invalid (/stats, /healthz, /metrics)
        current[0] = op.label
        strategy = op.as_strategy(generation_mode=mode, path_parameters=params or None)

        @budget(
            share,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(case=strategy)
        def check(case: schemathesis.Case[Operation]) -> None:
            # not the generated token
            headers = {k: v for k, v in case.headers.items() if k.lower() != "authorization"}
            if token is not None:
                headers["Authorization"] = f"Bearer {token}"
            case.headers = CaseInsensitiveDict(headers)
            response = case.call()
            # an over-long generated URL is refused with a (documented) 414 before
            # any validation; schemathesis' list of rejections lacks 414
            too_long = response.status_code == 414
            if too_long:  # path + query, decoded, as the app counts them
                url = urlsplit(response.request.url or "")
                length = len(unquote(url.path)) + len(unquote(url.query))
                assert length > app.config["MAX_URL_LENGTH"]
            case.validate_response(response, checks=CONFORMANCE + ([] if too_long else extra))
            seen.append((current[0], response.status_code))

        check()
    return seen


def labels(seen: list[tuple[str, int]]) -> set[str]:
    return {label for label, _ in seen}


@pytest.mark.slow
@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_every_operation_conforms(
    app: OpenAPI, svc: SyncTableService, mode: GenerationMode
) -> None:
    new_table(svc)
    seen = run_operations(app, mode)
    assert 401 not in {status for _, status in seen}  # the token was sent: they really ran
    total = sum(len(v) for v in app.api_doc["paths"].values())
    n = len(labels(seen))
    assert n == total if mode == GenerationMode.POSITIVE else n >= total - 3


@pytest.mark.slow
def test_operations_on_real_tables_conform(app: Flask, svc: SyncTableService) -> None:
    game = new_table(svc, humans=2, ais=1)
    lobby = new_table(svc, first_user=20, start=False)
    seen = run_operations(
        app, GenerationMode.POSITIVE, {"game_id": game, "lobby_id": lobby, "user_id": 1}
    )
    assert "POST /api/v1/games/{game_id}/reset" in labels(seen)


def check_other_tokens(seen: list[tuple[str, int]], token: str | None) -> None:
    api = [(label, status) for label, status in seen if " /api/" in label]
    assert api
    if token == READER:
        assert 401 not in {status for _, status in api}
        writes = {s for label, s in api if not label.startswith(("GET ", "HEAD "))}
        assert writes == {403}
    else:
        assert {status for _, status in api} == {401}


OTHER_TOKENS = [
    pytest.param(READER, id="read-only"),
    pytest.param(None, id="no-token"),
    pytest.param("wrong-token", id="wrong-token"),
]


@pytest.mark.parametrize("token", OTHER_TOKENS)
def test_other_tokens_conform(app: OpenAPI, svc: SyncTableService, token: str | None) -> None:
    game = new_table(svc)
    lobby = new_table(svc, first_user=20, start=False)
    ids = {"game_id": game, "lobby_id": lobby, "user_id": 1}
    seen = run_operations(app, GenerationMode.POSITIVE, ids, token=token, share=FEW)
    check_other_tokens(seen, token)


@pytest.mark.slow
@pytest.mark.parametrize("token", OTHER_TOKENS)
@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_other_tokens_conform_at_length(
    app: OpenAPI, svc: SyncTableService, token: str | None, mode: GenerationMode
) -> None:
    new_table(svc)
    seen = run_operations(app, mode, token=token)
    check_other_tokens(seen, token)
