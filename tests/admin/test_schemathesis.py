"""Schemathesis against the app's own OpenAPI document, over every operation:
positive and negative examples, with the admin token, and once more with the
ids of a real game; no 5xx, and every response conforms to the document
(status code, content type, headers, body schema)."""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from flask import Flask
from flask_openapi3.openapi import OpenAPI
from hypothesis import HealthCheck, given, settings
from requests.structures import CaseInsensitiveDict
from schemathesis import checks
from schemathesis.core.result import Err
from schemathesis.generation import GenerationMode

from engine.live import SyncTableService
from tests.admin.conftest import auth, new_table

CONFORMANCE = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_headers_conformance,
    checks.response_schema_conformance,
]
EXAMPLES = 12
Operation = schemathesis.APIOperation[Any, Any, Any, Any]


def run_operations(
    app: Flask, mode: GenerationMode, path_parameters: dict[str, Any] | None = None
) -> list[str]:
    schema = schemathesis.openapi.from_wsgi("/openapi/openapi.json", app)
    seen = []
    statuses: list[int] = []
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
        strategy = op.as_strategy(generation_mode=mode, path_parameters=params or None)

        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(case=strategy)
        def check(case: schemathesis.Case[Operation]) -> None:
            # not the generated token
            case.headers = CaseInsensitiveDict({**case.headers, **auth()})
            response = case.call_and_validate(checks=CONFORMANCE + extra)
            statuses.append(response.status_code)

        check()
        seen.append(op.label)
    assert 401 not in statuses  # the token was sent: the operations really ran
    return seen


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_every_operation_conforms(
    app: OpenAPI, svc: SyncTableService, mode: GenerationMode
) -> None:
    new_table(svc)
    seen = run_operations(app, mode)
    total = sum(len(v) for v in app.api_doc["paths"].values())
    assert len(seen) == total if mode == GenerationMode.POSITIVE else len(seen) >= total - 3


def test_operations_on_real_tables_conform(app: Flask, svc: SyncTableService) -> None:
    game = new_table(svc, humans=2, ais=1)
    lobby = new_table(svc, first_user=20, start=False)
    seen = run_operations(
        app, GenerationMode.POSITIVE, {"game_id": game, "lobby_id": lobby, "user_id": 1}
    )
    assert "POST /api/v1/games/{game_id}/reset" in seen
