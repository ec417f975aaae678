"""Tests of memex.codec.jsonfmt: JSON text identical to JavaScript's JSON.stringify."""

from __future__ import annotations

import json
import math
import subprocess
from collections import OrderedDict
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memex.codec.jsonfmt import dumpb, dumps, js_number

# ---------------------------------------------------------------- js_number


@pytest.mark.parametrize(
    ("x", "text"),
    [
        (0.0, "0"),
        (-0.0, "0"),
        (1.0, "1"),
        (-1.0, "-1"),
        (0.5, "0.5"),
        (0.1, "0.1"),
        (-2.5, "-2.5"),
        (1 / 3, "0.3333333333333333"),
        (100.0, "100"),
        (1e15, "1000000000000000"),
        (1e16, "10000000000000000"),
        (1e20, "100000000000000000000"),
        (123456789012345680000.0, "123456789012345680000"),
        (2.0**53, "9007199254740992"),
        (2.0**53 + 2, "9007199254740994"),
        (2.0**60, "1152921504606847000"),
        (1e21, "1e+21"),
        (-1e21, "-1e+21"),
        (1.2345e22, "1.2345e+22"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (0.0001, "0.0001"),
        (0.00001, "0.00001"),
        (1.5e-5, "0.000015"),
        (0.000001, "0.000001"),
        (0.000001234, "0.000001234"),
        (-0.000001, "-0.000001"),
        (9.999999999999997e-7, "9.999999999999997e-7"),
        (1e-7, "1e-7"),
        (1.5e-7, "1.5e-7"),
        (-1.5e-7, "-1.5e-7"),
        (5e-324, "5e-324"),
        (123.456, "123.456"),
        (4503599627370495.5, "4503599627370495.5"),
        (float("nan"), "null"),
        (float("inf"), "null"),
        (float("-inf"), "null"),
    ],
)
def test_js_number(x: float, text: str) -> None:
    assert js_number(x) == text
    assert dumps(x) == text
    assert dumps([x]) == f"[{text}]"
    assert dumps({"k": x}) == f'{{"k":{text}}}'


def test_js_number_accepts_int() -> None:
    assert js_number(3) == "3"
    assert js_number(10**20) == "100000000000000000000"


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_js_number_roundtrip(x: float) -> None:
    text = js_number(x)
    assert float(text) == x
    assert "e" not in text or "e+" in text or "e-" in text
    if x != 0 and 1e-6 <= abs(x) < 1e21:
        assert "e" not in text
    if x.is_integer() and abs(x) < 1e21:
        assert "." not in text and "e" not in text


# ---------------------------------------------------------------- dumps


def test_brief_example() -> None:
    value = {"a": 1.0, "b": [0.5, 1e-7, -0.0, float("nan")], "c": "é\n\u0001"}
    assert dumps(value) == '{"a":1,"b":[0.5,1e-7,0,null],"c":"é\\n\\u0001"}'
    assert dumpb(value) == '{"a":1,"b":[0.5,1e-7,0,null],"c":"é\\n\\u0001"}'.encode()


def test_scalars() -> None:
    assert dumps(None) == "null"
    assert dumps(True) == "true"
    assert dumps(False) == "false"
    assert dumps([True, False, 1, 0]) == "[true,false,1,0]"
    assert dumps(0) == "0"
    assert dumps(-17) == "-17"
    assert dumps(10**30) == "1000000000000000000000000000000"
    assert dumps(10**400) == "1" + "0" * 400
    assert dumps("x") == '"x"'
    assert dumps("") == '""'


def test_strings() -> None:
    assert dumps('"\\') == r'"\"\\"'
    assert dumps("\b\f\n\r\t") == r'"\b\f\n\r\t"'
    assert dumps("\x00\x01\x1f") == r'"\u0000\u0001\u001f"'
    assert dumps("\x0b\x1b") == r'"\u000b\u001b"'
    # not escaped by JSON.stringify
    assert dumps("\x7f\u2028\u2029/<>&'") == '"\x7f\u2028\u2029/<>&\'"'
    assert dumps("é日本😀") == '"é日本😀"'
    assert dumpb("é") == b'"\xc3\xa9"'


def test_lone_surrogates_escaped() -> None:
    assert dumps("a\ud800b") == '"a\\ud800b"'
    assert dumps(["\udfff", 1.0]) == '["\\udfff",1]'
    assert dumps({"k\ud83d": "v"}) == '{"k\\ud83d":"v"}'
    assert (
        dumps({"k\ud83d": [1.0, {}]}, pretty=True) == '{\n  "k\\ud83d": [\n    1,\n    {}\n  ]\n}'
    )


def test_key_order_and_containers() -> None:
    assert dumps({"b": 1, "a": 2, "c": {"z": 0, "y": 1}}) == '{"b":1,"a":2,"c":{"z":0,"y":1}}'
    assert dumps((1, (2.0, (3.5,)), [])) == "[1,[2,[3.5]],[]]"
    assert dumps({"t": ((),)}) == '{"t":[[]]}'
    assert dumps(OrderedDict(b=1.0, a=2)) == '{"b":1,"a":2}'


def test_subclasses_print_as_base() -> None:
    class S(str):
        pass

    class F(float):
        pass

    class I(int):  # noqa: E742
        pass

    assert dumps([S("x"), F(1.0), F(0.5), I(3)]) == '["x",1,0.5,3]'


def test_unsupported_type() -> None:
    with pytest.raises(TypeError):
        dumps([object()])


def test_no_false_alarm_damage() -> None:
    # text that looks like suspicious floats inside strings stays untouched
    value = {"s": "v1.0,", "t": "1e16]", "u": ["2.0}", "x1e-6"], "n": 0.25}
    assert dumps(value) == '{"s":"v1.0,","t":"1e16]","u":["2.0}","x1e-6"],"n":0.25}'
    assert dumps(["1.0"]) == '["1.0"]'


def test_pretty() -> None:
    value = {"a": [], "b": {}, "c": [1, {"d": 2}]}
    assert dumps(value, pretty=True) == (
        '{\n  "a": [],\n  "b": {},\n  "c": [\n    1,\n    {\n      "d": 2\n    }\n  ]\n}'
    )
    assert dumps([], pretty=True) == "[]"
    assert dumps({}, pretty=True) == "{}"
    assert dumps(1.0, pretty=True) == "1"
    assert dumps("a: b, [c]", pretty=True) == '"a: b, [c]"'
    assert dumps({"x": [1e21, 1e-6, -0.0]}, pretty=True) == (
        '{\n  "x": [\n    1e+21,\n    0.000001,\n    0\n  ]\n}'
    )
    assert dumpb({"é": "\n"}, pretty=True) == '{\n  "é": "\\n"\n}'.encode()


def test_unchanged_value_not_mutated() -> None:
    inner = {"x": 1.0}
    value = {"a": inner, "b": [2.0, 0.5]}
    dumps(value)
    assert value == {"a": {"x": 1.0}, "b": [2.0, 0.5]}
    assert type(inner["x"]) is float
    assert type(value["b"][0]) is float  # type: ignore[index]


# ---------------------------------------------------------------- properties

json_values: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.text(),
    lambda children: (
        st.lists(children, max_size=5)
        | st.tuples(children, children)
        | st.dictionaries(st.text(max_size=5), children, max_size=5)
    ),
    max_leaves=30,
)


def _same(expected: Any, got: Any) -> bool:
    if isinstance(expected, float):
        if math.isnan(expected) or math.isinf(expected):
            return got is None
        # JSON digits of an integral float may parse back as an int
        return isinstance(got, int | float) and not isinstance(got, bool) and float(got) == expected
    if isinstance(expected, bool) or expected is None:
        return got is expected
    if isinstance(expected, int):
        return type(got) is int and got == expected
    if isinstance(expected, str):
        return isinstance(got, str) and got == expected
    if isinstance(expected, list | tuple):
        return (
            isinstance(got, list)
            and len(got) == len(expected)
            and all(_same(e, g) for e, g in zip(expected, got, strict=True))
        )
    assert isinstance(expected, dict)
    return (
        isinstance(got, dict)
        and list(got) == list(expected)
        and all(_same(expected[k], got[k]) for k in expected)
    )


def _has_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return any("\ud800" <= c <= "\udfff" for c in value)
    if isinstance(value, dict):
        return any(_has_surrogate(k) or _has_surrogate(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(_has_surrogate(v) for v in value)
    return False


@given(json_values)
def test_roundtrip(value: Any) -> None:
    text = dumps(value)
    if _has_surrogate(value):
        # json.loads turns \udxxx escapes back into lone surrogates
        assert _same(value, json.loads(text))
        return
    assert _same(value, json.loads(text))
    assert dumpb(value) == text.encode()
    pretty = dumps(value, pretty=True)
    assert _same(value, json.loads(pretty))
    # pretty is compact text re-indented: same tokens
    assert json.dumps(json.loads(pretty)) == json.dumps(json.loads(text))


float_free_values: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=5), children, max_size=5)
    ),
    max_leaves=30,
)


@given(float_free_values)
def test_layout_matches_python_json_without_floats(value: Any) -> None:
    """Without floats, Python's json prints JSON.stringify's layout and escapes too."""
    if _has_surrogate(value):
        return
    assert dumps(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    assert dumps(value, pretty=True) == json.dumps(value, ensure_ascii=False, indent=2)


# ---------------------------------------------------------------- node cross-check


def test_matches_node_json_stringify() -> None:
    floats = [
        0.0,
        -0.0,
        1.0,
        0.1,
        1e-7,
        1.5e-7,
        1e-6,
        2.5e-6,
        1e-5,
        1e16,
        1e20,
        1e21,
        1.2345e22,
        123456789012345680000.0,
        2.0**53 + 2,
        5e-324,
        1.7976931348623157e308,
        1 / 3,
        -123.456,
    ]
    value = {
        "f": floats,
        "s": 'é\n\u0001\x7f\u2028\u2029"\\\b\f\r\t\x1f/<>&😀',
        "n": [None, True, False, 7, -5],
        "e": {},
        "l": [],
        "t": [[], [{}], {"x": {"y": []}}],
    }
    src = json.dumps(value, ensure_ascii=True)  # lossless for these values
    for indent in ("undefined", "2"):
        script = (
            f"process.stdout.write(JSON.stringify(JSON.parse(process.argv[1]), null, {indent}))"
        )
        out = subprocess.run(
            ["node", "-e", script, src], capture_output=True, text=True, check=True, timeout=60
        ).stdout
        assert dumps(value, pretty=indent == "2") == out
