"""How a survived failure is logged (#40): a fault the code expects is one
warning line with its own words; anything else keeps its traceback; a
cancellation is never swallowed."""

from __future__ import annotations

import asyncio
import logging

import pytest

from tables import ServiceUnavailable, expected_fault, log_failure, survived

log = logging.getLogger("tests.faults_logging")


@pytest.mark.parametrize(
    "fault",
    [
        ServiceUnavailable("Redis is unavailable: no answer from 127.0.0.1:7000"),
        ConnectionRefusedError(111, "Connect call failed"),
        TimeoutError(),
    ],
)
def test_an_expected_fault_is_one_warning_line(
    fault: Exception, caplog: pytest.LogCaptureFixture
) -> None:
    assert expected_fault(fault)
    with caplog.at_level(logging.DEBUG, logger=log.name), survived(log, "chat %s not held", 7):
        raise fault
    [record] = caplog.records
    assert record.levelno == logging.WARNING
    assert record.exc_info is None
    assert record.getMessage().startswith("chat 7 not held (")
    assert "\n" not in record.getMessage()


def test_a_bug_keeps_its_traceback(caplog: pytest.LogCaptureFixture) -> None:
    bug = KeyError("seat")
    assert not expected_fault(bug)
    with caplog.at_level(logging.DEBUG, logger=log.name):
        log_failure(log, bug, "render of %s failed", "T1")
    [record] = caplog.records
    assert record.levelno == logging.ERROR
    assert record.exc_info is not None
    assert record.exc_info[1] is bug
    assert record.getMessage() == "render of T1 failed"


def test_a_cancellation_goes_through() -> None:
    with pytest.raises(asyncio.CancelledError), survived(log, "never logged"):
        raise asyncio.CancelledError


def test_the_code_after_the_block_runs(caplog: pytest.LogCaptureFixture) -> None:
    done = []
    with caplog.at_level(logging.DEBUG, logger=log.name):
        with survived(log, "x"):
            raise ServiceUnavailable("down")
        done.append("after")
    assert done == ["after"]
