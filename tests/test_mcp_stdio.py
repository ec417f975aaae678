"""The stdio screen of memex mcp: what the SDK's reader would drop is answered."""

from __future__ import annotations

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed")
from memex.mcp.stdio import INVALID_PARAMS, PARSE_ERROR, screen_line  # noqa: E402


def test_screen_passes_valid_messages_through() -> None:
    line = '{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n'
    assert screen_line(line) == (True, None)
    assert screen_line('{"jsonrpc":"2.0","id":1,"method":"x","params":{"t":"caf\\u00e9 \\ud83d\\ude00"}}') == (True, None)
    assert screen_line("   \n") == (False, None)


def test_screen_answers_a_parse_error_with_a_null_id() -> None:
    forward, reply = screen_line('{"jsonrpc": "2.0", "id": 1,\n')
    assert not forward and reply is not None
    assert '"id": null' in reply and f'"code": {PARSE_ERROR}' in reply


def test_screen_answers_a_lone_surrogate_naming_its_field() -> None:
    line = '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"remember","arguments":{"text":"a\\ud800b","parents":["ok","\\udfff"]}}}'
    forward, reply = screen_line(line)
    assert not forward and reply is not None
    assert f'"code": {INVALID_PARAMS}' in reply and '"id": 7' in reply
    assert "params.arguments.text: holds a lone surrogate" in reply or "params.arguments.parents[1]" in reply
    # a notification holding one is dropped without a reply
    assert screen_line('{"jsonrpc":"2.0","method":"notifications/x","params":{"\\ud800":1}}') == (False, None)
