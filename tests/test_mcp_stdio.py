"""The stdio screen of memex mcp: every line the SDK's reader would drop unanswered gets an answer."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed")
from memex.mcp.stdio import INVALID_PARAMS, INVALID_REQUEST, MAX_DEPTH, PARSE_ERROR, screen_line  # noqa: E402


def _reply(line: bytes | str) -> dict:
    forward, reply = screen_line(line)
    assert forward is None and reply is not None
    return json.loads(reply)


def test_screen_passes_valid_messages_through() -> None:
    line = '{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n'
    assert screen_line(line) == (line, None)
    assert screen_line(line.encode()) == (line, None)
    ok = '{"jsonrpc":"2.0","id":"a","method":"x","params":{"t":"caf\\u00e9 \\ud83d\\ude00"}}'
    assert screen_line(ok) == (ok, None)
    response = '{"jsonrpc":"2.0","id":3,"result":{}}'  # a client's answer to a server request
    assert screen_line(response) == (response, None)
    assert screen_line("   \n") == (None, None)


def test_screen_answers_a_parse_error_with_the_id_when_the_line_starts_like_a_request() -> None:
    got = _reply('{"jsonrpc": "2.0", "id": 1, "method": "ping"\n')
    assert got["id"] == 1 and got["error"]["code"] == PARSE_ERROR
    assert got["error"]["message"].startswith("Parse error: ")
    assert _reply("{nope")["id"] is None


def test_screen_answers_bytes_that_are_not_utf8() -> None:
    got = _reply(b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"t":"bad \xff\xfe"}}\n')
    assert got["id"] == 5 and got["error"]["code"] == PARSE_ERROR
    assert "not valid UTF-8" in got["error"]["message"]


@pytest.mark.parametrize(
    "line, expected_id",
    [
        ('[{"jsonrpc":"2.0","id":1,"method":"ping"}]', None),
        ("42", None),
        ('{"id":7,"method":"ping"}', 7),
        ('{"jsonrpc":"2.0"}', None),
        ('{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', None),
        ('{"jsonrpc":"2.0","id":1.5,"method":"ping"}', None),
        ('{"jsonrpc":"2.0","id":true,"method":"ping"}', None),
        ('{"jsonrpc":"2.0","id":4,"method":5}', 4),
        ('{"jsonrpc":"2.0","id":4}', 4),
        ('{"jsonrpc":"2.0","id":NaN,"method":"ping"}', None),
    ],
)
def test_screen_answers_what_is_not_one_jsonrpc_message(line: str, expected_id: int | None) -> None:
    got = _reply(line)
    assert got["id"] == expected_id and got["error"]["code"] == INVALID_REQUEST


def test_screen_answers_a_lone_surrogate_naming_its_field() -> None:
    line = (
        '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"remember",'
        '"arguments":{"text":"a\\ud800b"}}}'
    )
    got = _reply(line)
    assert got["id"] == 7 and got["error"] == {
        "code": INVALID_PARAMS,
        "message": "ValidationError: params.arguments.text: holds a lone surrogate (not valid Unicode text)",
    }
    # a request whose id holds one is answered with a null id; a notification holding one is dropped
    got = _reply('{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}')
    assert got["id"] is None and got["error"]["code"] == INVALID_REQUEST
    assert screen_line('{"jsonrpc":"2.0","method":"notifications/x","params":{"\\ud800":1}}') == (
        None,
        None,
    )


@pytest.mark.parametrize("depth", [MAX_DEPTH, 600, 5000])
def test_screen_answers_a_message_nested_too_deep(depth: int) -> None:
    """The SDK's parser gives up near 200 levels and drops the line; the screen answers it."""
    line = (
        '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"arguments":{"meta":'
        + "[" * depth
        + "]" * depth
        + "}}}"
    )
    got = _reply(line)
    assert got["id"] == 9 and got["error"]["code"] == INVALID_PARAMS
    assert f"nested deeper than {MAX_DEPTH} levels" in got["error"]["message"]


def test_screen_forwards_a_message_just_within_the_depth_limit() -> None:
    inner = MAX_DEPTH - 4  # the message, params, arguments and meta's own object are 4 levels
    line = (
        '{"jsonrpc":"2.0","id":9,"method":"x","params":{"arguments":{"meta":{"a":'
        + "[" * inner
        + "]" * inner
        + "}}}}"
    )
    assert screen_line(line) == (line, None)
