"""Tests of memex._uuid: UUIDv7 generation and timestamp extraction."""

from __future__ import annotations

import threading
import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

import memex._time
import memex._uuid
from memex._uuid import extract_timestamp, safe_extract_timestamp, uuid7
from memex.errors import InvalidTimestampError, ValidationError

SAMPLE = "018fcb92-16a0-7aca-8261-b2e9ad2a739b"
SAMPLE_MS = 1717107300000
V4 = "3b241101-e2bb-4255-8caf-4136c566a962"


pytestmark = pytest.mark.usefixtures("fresh_uuid_generator")  # no previous clock-driven id


def test_extract_sample() -> None:
    assert extract_timestamp(SAMPLE) == SAMPLE_MS
    assert safe_extract_timestamp(SAMPLE) == SAMPLE_MS


@pytest.mark.parametrize(
    "text",
    [
        SAMPLE,
        SAMPLE.upper(),
        SAMPLE.replace("-", ""),
        SAMPLE.replace("-", "").upper(),
        "{" + SAMPLE + "}",
        "{" + SAMPLE.upper() + "}",
        "urn:uuid:" + SAMPLE,
        "URN:UUID:" + SAMPLE,
        "Urn:Uuid:" + SAMPLE.upper(),
        "018FCB92-16a0-7ACA-8261-b2e9AD2a739b",
    ],
)
def test_accepted_spellings(text: str) -> None:
    assert safe_extract_timestamp(text) == SAMPLE_MS
    assert extract_timestamp(text) == SAMPLE_MS


@pytest.mark.parametrize(
    "text",
    [
        V4,  # version 4
        "018fcb92-16a0-6aca-8261-b2e9ad2a739b",  # version 6
        "018fcb92-16a0-7aca-c261-b2e9ad2a739b",  # variant 110
        "018fcb92-16a0-7aca-7261-b2e9ad2a739b",  # variant 0
        "018fcb92-16a0-7aca-e261-b2e9ad2a739b",  # variant 111
        "00000000-0000-7aca-8261-b2e9ad2a739b",  # time 0
        " " + SAMPLE,
        SAMPLE + " ",
        SAMPLE + "\n",
        "{" + SAMPLE,
        SAMPLE + "}",
        "(" + SAMPLE + ")",
        "urn:uuid:{" + SAMPLE + "}",
        "uuid:" + SAMPLE,
        "urn:uuid:" + SAMPLE.replace("-", ""),
        "{" + SAMPLE.replace("-", "") + "}",
        SAMPLE.replace("-", "", 1),  # hyphens in wrong places
        "018fcb9216a0-7aca-8261-b2e9-ad2a739b",
        "018fcb92-16a0-7aca-8261-b2e9ad2a739g",  # non-hex
        "018fcb92-16a0-7aca-8261-b2e9ad2a739",  # short
        "018fcb92-16a0-7aca-8261-b2e9ad2a739bb",  # long
        "018fcb92-16a0-7aca-8261-b2e9ad2a739\uff42",  # fullwidth b
        "０18fcb92-16a0-7aca-8261-b2e9ad2a739b",  # fullwidth 0
        "018fcb92_16a0_7aca_8261_b2e9ad2a739b",
        "",
    ],
)
def test_rejected_spellings(text: str) -> None:
    assert safe_extract_timestamp(text) is None
    with pytest.raises(InvalidTimestampError) as exc:
        extract_timestamp(text)
    assert str(exc.value) == f'Cannot extract timestamp: "{text}" is not a valid UUIDv7'


@pytest.mark.parametrize(
    "value", [None, 1717107300000, 1.5, b"018fcb92-16a0-7aca-8261-b2e9ad2a739b", uuid.UUID(SAMPLE)]
)
def test_non_str_is_none(value: object) -> None:
    assert safe_extract_timestamp(value) is None


def test_extract_non_str_raises() -> None:
    with pytest.raises(InvalidTimestampError) as exc:
        extract_timestamp(None)  # type: ignore[arg-type]
    assert str(exc.value) == 'Cannot extract timestamp: "None" is not a valid UUIDv7'


def test_variant_digits_8_9_a_b_accepted() -> None:
    for digit in "89abAB":
        text = SAMPLE[:19] + digit + SAMPLE[20:]
        assert safe_extract_timestamp(text) == SAMPLE_MS


def test_max_time() -> None:
    assert safe_extract_timestamp("ffffffff-ffff-7fff-bfff-ffffffffffff") == 2**48 - 1
    assert safe_extract_timestamp("00000000-0001-7000-8000-000000000000") == 1


def test_uuid7_shape() -> None:
    text = uuid7()
    assert len(text) == 36
    assert text == text.lower()
    parsed = uuid.UUID(text)
    assert str(parsed) == text
    assert parsed.version == 7
    assert parsed.variant == uuid.RFC_4122


def test_uuid7_default_uses_memex_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memex._time, "now_ms", lambda: 1_700_000_000_123)
    assert extract_timestamp(uuid7()) == 1_700_000_000_123


def test_uuid7_explicit_ms_embedded_exactly() -> None:
    for ms in [1, 1_000, SAMPLE_MS, 1_704_445_200_000, 2**48 - 1]:
        for _ in range(50):
            text = uuid7(ms)
            assert extract_timestamp(text) == ms
            parsed = uuid.UUID(text)
            assert parsed.version == 7
            assert parsed.variant == uuid.RFC_4122


def test_uuid7_explicit_ms_masked() -> None:
    assert int(uuid7(2**48 + 5).replace("-", "")[:12], 16) == 5
    assert int(uuid7(0).replace("-", "")[:12], 16) == 0
    assert safe_extract_timestamp(uuid7(0)) is None
    assert int(uuid7(-1).replace("-", "")[:12], 16) == 2**48 - 1


def test_uuid7_explicit_ms_random_remainder() -> None:
    ids = {uuid7(SAMPLE_MS) for _ in range(1000)}
    assert len(ids) == 1000


@pytest.mark.parametrize("bad", [1.5, "1", True])
def test_uuid7_bad_ms(bad: object) -> None:
    with pytest.raises(ValidationError):
        uuid7(bad)  # type: ignore[arg-type]


@given(st.integers(min_value=1, max_value=2**48 - 1))
def test_uuid7_explicit_roundtrip(ms: int) -> None:
    assert extract_timestamp(uuid7(ms)) == ms


def test_uuid7_monotonic_frozen_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    frozen = 4_000_000_000_000
    monkeypatch.setattr(memex._time, "now_ms", lambda: frozen)
    ids = [uuid7() for _ in range(10_000)]
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)
    as_ints = [uuid.UUID(i).int for i in ids]
    assert all(a < b for a, b in zip(as_ints, as_ints[1:], strict=False))
    times = [extract_timestamp(i) for i in ids]
    assert times[0] == frozen
    # 12-bit counter seeded below 2048: at least 2048 ids per ms, so 10,000
    # ids advance the time field by at most 10,000 / 2048 < 5 ms.
    assert frozen <= times[-1] <= frozen + 5
    for text in ids:
        parsed = uuid.UUID(text)
        assert parsed.version == 7
        assert parsed.variant == uuid.RFC_4122


def test_uuid7_monotonic_when_clock_goes_back(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [5_000_000_000_000]
    monkeypatch.setattr(memex._time, "now_ms", lambda: clock[0])
    first = uuid7()
    clock[0] -= 10_000
    second = uuid7()
    assert second > first
    assert extract_timestamp(second) >= extract_timestamp(first)
    clock[0] = 5_000_000_000_100
    third = uuid7()
    assert third > second
    assert extract_timestamp(third) == 5_000_000_000_100


def test_uuid7_monotonic_across_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memex._time, "now_ms", lambda: 6_000_000_000_000)
    results: list[list[str]] = [[] for _ in range(4)]

    def work(out: list[str]) -> None:
        for _ in range(2_000):
            out.append(uuid7())

    threads = [threading.Thread(target=work, args=(r,)) for r in results]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    all_ids = [i for r in results for i in r]
    assert len(set(all_ids)) == len(all_ids)
    for r in results:
        assert r == sorted(r)
