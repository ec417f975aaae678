"""``memex serve`` in a real browser: Debian's headless Chromium driven by Selenium.

The server is the ``memex serve`` command itself, in a subprocess on a free
port. The browser and its driver are the system's (``/usr/bin/chromium``,
``/usr/bin/chromedriver``, named explicitly; ``SE_OFFLINE`` keeps Selenium
Manager from fetching anything). The test loads the overview, runs a search,
opens an item and its drawing, moves the time slider, watches a record
another process appends appear, and checks that the ``<script>`` texts of
items never run and that the Content-Security-Policy blocks nothing the
pages need. Screenshots go to ``$TMPDIR/memex-web-screenshots/`` (CI
artifacts). Under ``CI=true`` it never skips; elsewhere it skips when
Chromium is not installed.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

import pytest

from memex import MemexStore
from memex.web.pages import item_address
from tests.test_web import (
    BIDI_AUTHOR,
    ODD_IDS,
    ROUGH_IDS,
    RTL_AUTHOR,
    TRAVEL_IDS,
    build_drawing_store,
    build_long_values_store,
    build_rough_store,
    build_store,
    build_travel_store,
)

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
    "--window-size=1440,900",
)


def _missing(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"the browser test needs {reason} under CI=true", pytrace=False)
    pytest.skip(reason)


try:
    from selenium import webdriver
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError:  # pragma: no cover - the test extra installs selenium
    webdriver = None


@pytest.fixture(scope="module")
def shots() -> Path:
    out = Path(os.environ.get("TMPDIR") or tempfile.gettempdir()) / "memex-web-screenshots"
    out.mkdir(parents=True, exist_ok=True)
    return out


def _serve(path: Path, *more: str) -> Iterator[str]:
    """``memex serve`` of ``path`` on a free port (and the options ``more``): its address,
    until the generator closes."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "memex", "serve", "--db", str(path), "--port", "0", *more],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        found = re.search(r"(http://127\.0\.0\.1:\d+/)", line)
        assert found, line
        yield found.group(1).rstrip("/")
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, Any]]:
    path = tmp_path_factory.mktemp("browser") / "memex.db"
    built = build_store(path)
    for base in _serve(path):
        yield base, path, built


@pytest.fixture(scope="module")
def served_drawings(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[str, dict[str, str]]]:
    path = tmp_path_factory.mktemp("drawings") / "memex.db"
    ids = build_drawing_store(path)
    for base in _serve(path):
        yield base, ids


@pytest.fixture(scope="module")
def served_rough(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[str, dict[str, str]]]:
    path = tmp_path_factory.mktemp("rough") / "memex.db"
    ids = build_rough_store(path)
    for base in _serve(path):
        yield base, ids


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if webdriver is None:
        _missing("selenium (the test extra)")
    if not CHROMIUM.exists() or not CHROMEDRIVER.exists():
        _missing("Debian's chromium and chromium-driver (apt-get install chromium chromium-driver)")
    os.environ["SE_OFFLINE"] = "true"  # Selenium Manager downloads nothing
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in FLAGS:
        options.add_argument(flag)
    profile = tempfile.mkdtemp(prefix="memex-chromium-")
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def _wait(driver: Any, seconds: float = 15) -> Any:
    """A wait that retries while the page it watches is being replaced."""
    return WebDriverWait(
        driver,
        seconds,
        ignored_exceptions=(StaleElementReferenceException, NoSuchElementException),
    )


def _shot(driver: Any, shots: Path, name: str) -> None:
    height = driver.execute_script("return document.body.scrollHeight")
    driver.set_window_size(1440, min(max(900, int(height) + 40), 2400))
    driver.save_screenshot(str(shots / f"{name}.png"))
    driver.set_window_size(1440, 900)


def _problems(driver: Any) -> list[str]:
    """Console errors other than the favicon's: a CSP violation, a script error."""
    return [
        e["message"]
        for e in driver.get_log("browser")
        if e["level"] == "SEVERE" and "favicon" not in e["message"]
    ]


def test_the_inspector_in_a_browser(
    served: tuple[str, Path, Any], browser: Any, shots: Path
) -> None:
    base, path, built = served
    wait = _wait(browser)
    with MemexStore.open(path, read_only=True) as store:
        items_now = len(store.mem.items)
        head = store.position
        items_before = len(store.as_of(position=head - 1).mem.items)

    # the overview
    browser.get(base + "/")
    assert browser.find_element(By.ID, "count-items").text == str(items_now)
    assert f"latest record @{head}" in browser.find_element(By.ID, "when-label").text
    _shot(browser, shots, "1-overview")

    # a search, typed and submitted
    box = browser.find_element(By.LINK_TEXT, "Search")
    box.click()
    q = wait.until(ec.presence_of_element_located((By.ID, "q")))
    q.send_keys("what does Ada drink")
    browser.find_element(By.ID, "ask").click()
    wait.until(ec.presence_of_element_located((By.CLASS_NAME, "hit")))
    texts = [e.text for e in browser.find_elements(By.CLASS_NAME, "hit-text")]
    assert "Ada drinks black tea now" in texts
    assert "Ada drinks green tea every morning" not in texts  # superseded
    assert browser.find_element(By.CSS_SELECTOR, "details.why").get_attribute("open") is not None
    _shot(browser, shots, "2-search")

    # an item, opened from the results, with its provenance drawn by Cytoscape.js
    browser.find_element(By.LINK_TEXT, "Ada drinks black tea now").click()
    wait.until(ec.presence_of_element_located((By.ID, "item-text")))
    assert browser.find_element(By.ID, "item-text").text == "Ada drinks black tea now"
    browser.get(base + f"/item/{built.ids['plan']}")
    drawn = wait.until(lambda d: d.find_element(By.ID, "provenance").get_attribute("data-drawn"))
    assert drawn == "3"  # the item and its two parents
    _shot(browser, shots, "3-item")

    # hostile texts are shown, never run
    for name in ("script", "img", "close"):
        browser.get(base + f"/item/{built.ids[name]}")
        shown = browser.find_element(By.ID, "item-text").text
        assert "window.pwned" in shown
        assert browser.execute_script("return typeof window.pwned") == "undefined"
    browser.get(base + "/search?q=window+pwned")
    assert browser.execute_script("return typeof window.pwned") == "undefined"
    browser.get(base + "/tasks")
    assert browser.execute_script("return typeof window.pwned") == "undefined"

    # the time slider, moved one record back with the keyboard
    browser.get(base + "/")
    slider = browser.find_element(By.ID, "slider")
    slider.send_keys(Keys.ARROW_LEFT)
    wait.until(ec.url_contains("as_of="))
    assert browser.current_url.endswith(f"as_of=%40{head - 1}")
    assert browser.find_element(By.ID, "when-label").text == f"as of @{head - 1}"
    assert browser.find_element(By.ID, "count-items").text == str(items_before)
    browser.get(base + f"/item/{built.ids['tea']}?as_of=@{built.positions['before_tea2']}")
    assert "Superseded by" not in browser.page_source
    _shot(browser, shots, "4-time-travel")
    slider = browser.find_element(By.ID, "slider")
    slider.send_keys(Keys.END)  # back to the head: live again
    wait.until(lambda d: "live" in d.find_element(By.ID, "when-label").text)
    assert "as_of" not in browser.current_url

    # live: a record another process appends shows up without a reload
    browser.get(base + "/")
    banner = browser.find_element(By.ID, "live-banner")
    assert not banner.is_displayed()
    with MemexStore.open(path, author="agent:other", scope="user:ada") as writer:
        writer.remember("Ada started learning the cello")
    _wait(browser, 10).until(lambda d: d.find_element(By.ID, "live-banner").is_displayed())
    browser.find_element(By.ID, "live-reload").click()
    wait.until(lambda d: d.find_element(By.ID, "count-items").text == str(items_now + 1))

    # the hash chain, verified on demand, with its progress
    browser.get(base + "/verify")
    browser.find_element(By.ID, "verify-run").click()
    _wait(browser, 30).until(lambda d: d.find_elements(By.ID, "verdict"))
    assert browser.find_element(By.ID, "verdict").text == "✔ The chain and every snapshot verify"
    assert _problems(browser) == []  # no CSP violation, no script error on any page


# -- the review's faults (each test named after the fault) ----------------------------------------
_GEOMETRY = """
var box = document.getElementById("provenance"), wrap = document.getElementById("provenance-wrap");
var cy = box._cyreg.cy;
function rect(b) { return [b.x1, b.y1, b.x2, b.y2]; }
return {
  zoom: cy.zoom(),
  box: [box.offsetWidth, box.offsetHeight],
  wrap: [wrap.clientWidth, wrap.clientHeight, wrap.scrollWidth, wrap.scrollHeight],
  note: document.getElementById("provenance-scroll").hidden,
  nodes: cy.nodes().map(function (n) { return {
    id: n.id(), item: n.data("item"), label: n.data("label"), full: n.data("full"),
    font: parseFloat(n.style("font-size")), pos: [n.renderedPosition().x, n.renderedPosition().y],
    box: rect(n.renderedBoundingBox({ includeLabels: false, includeOverlays: false })),
    text: rect(n.renderedBoundingBox({ includeNodes: false, includeEdges: false,
                                       includeLabels: true, includeOverlays: false })) }; }),
  edges: cy.edges().map(function (e) {
    var points = [e.renderedSourceEndpoint()].concat(e.renderedSegmentPoints() || [],
                                                      [e.renderedTargetEndpoint()]);
    return { source: e.source().id(), target: e.target().id(),
             points: points.map(function (p) { return [p.x, p.y]; }) }; })
};
"""


def _geometry(driver: Any, base: str, item_id: str) -> dict[str, Any]:
    driver.get(base + "/item/" + quote(item_id, safe=""))
    drawn = _wait(driver).until(
        lambda d: d.find_element(By.ID, "provenance").get_attribute("data-drawn")
    )
    driver.execute_script(
        "document.getElementById('provenance-wrap').scrollIntoView({block: 'center'})"
    )
    found: dict[str, Any] = driver.execute_script(_GEOMETRY)
    assert len(found["nodes"]) == int(drawn)
    return found


def _cross(p: list[float], q: list[float], r: list[float], s: list[float]) -> bool:
    """Whether segments pq and rs cross at a point inside both (not at an end, not along)."""

    def side(a: list[float], b: list[float], c: list[float]) -> float:
        return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])

    d1, d2, d3, d4 = side(r, s, p), side(r, s, q), side(p, q, r), side(p, q, s)
    eps = 1e-6
    return (d1 > eps and d2 < -eps or d1 < -eps and d2 > eps) and (
        d3 > eps and d4 < -eps or d3 < -eps and d4 > eps
    )


def _through(p: list[float], q: list[float], box: list[float]) -> bool:
    """Whether the axis-parallel segment pq passes through the inside of ``box``."""
    x1, y1, x2, y2 = box[0] + 2, box[1] + 2, box[2] - 2, box[3] - 2
    lo_x, hi_x = sorted((p[0], q[0]))
    lo_y, hi_y = sorted((p[1], q[1]))
    return lo_x < x2 and hi_x > x1 and lo_y < y2 and hi_y > y1


def test_drawing_labels_are_readable_and_the_drawing_fits_its_frame(
    served_drawings: tuple[str, dict[str, str]], browser: Any, shots: Path
) -> None:
    base, ids = served_drawings
    for name in ("tree", "chain", "long", "odd"):
        g = _geometry(browser, base, ids[name])
        width, height = g["box"]
        frame_w, frame_h, scroll_w, scroll_h = g["wrap"]
        for n in g["nodes"]:
            assert g["zoom"] * n["font"] >= 11, (name, n["item"])  # px on the screen
            assert len(n["label"].split("\n")) <= 2, n["label"]
            x1, y1, x2, y2 = n["box"]
            assert 0 <= x1 and x2 <= width and 0 <= y1 and y2 <= height, (name, n["item"])
            t = n["text"]
            assert x1 <= t[0] and t[2] <= x2 and y1 <= t[1] and t[3] <= y2, (name, n["label"])
            if n["label"].replace("\n", " ") != n["full"]:
                assert n["label"].endswith("…"), n["label"]
        if width > frame_w:  # wider than its frame only when the drawing is
            assert min(n["box"][0] for n in g["nodes"]) <= 24 + 2, name
            assert max(n["box"][2] for n in g["nodes"]) >= width - 24 - 2, name
        if height > frame_h:
            assert min(n["box"][1] for n in g["nodes"]) <= 24 + 2, name
            assert max(n["box"][3] for n in g["nodes"]) >= height - 24 - 2, name
        larger = width > frame_w or height > frame_h
        assert g["note"] is (not larger), name  # "scroll it" shows when it must
        assert (scroll_w, scroll_h) == (max(frame_w, width), max(frame_h, height))
        _shot(browser, shots, f"drawing-{name}")
    tree = _geometry(browser, base, ids["tree"])
    assert (
        tree["box"][1] > tree["wrap"][1] and tree["box"][0] == tree["wrap"][0]
    )  # scrolls down only
    chain = _geometry(browser, base, ids["chain"])
    assert chain["box"][0] > chain["wrap"][0]  # 30 boxes in a row: the frame scrolls
    root = next(n for n in chain["nodes"] if n["item"] == ids["chain"])
    left = browser.execute_script("return document.getElementById('provenance-wrap').scrollLeft")
    assert left <= root["box"][0] and root["box"][2] <= left + chain["wrap"][0]  # in view
    assert _problems(browser) == []


def test_drawing_edges_of_a_tree_do_not_cross_nor_run_across_a_box(
    served_drawings: tuple[str, dict[str, str]], browser: Any
) -> None:
    base, ids = served_drawings
    g = _geometry(browser, base, ids["tree"])
    boxes = {n["id"]: n["box"] for n in g["nodes"]}
    segments = [
        (e, p, q) for e in g["edges"] for p, q in zip(e["points"], e["points"][1:], strict=False)
    ]
    assert len(g["edges"]) == 27
    for (e, p, q), (f, r, s) in itertools.combinations(segments, 2):
        if e is not f:
            assert not _cross(p, q, r, s), (e["source"], e["target"], f["source"], f["target"])
    for e, p, q in segments:
        for node, box in boxes.items():
            if node not in (e["source"], e["target"]):
                assert not _through(p, q, box), (e["source"], e["target"], node)


def test_drawing_labels_show_the_whole_text_on_hover(
    served_drawings: tuple[str, dict[str, str]], browser: Any
) -> None:
    base, ids = served_drawings
    g = _geometry(browser, base, ids["long"])
    root = next(n for n in g["nodes"] if n["item"] == ids["long"])
    assert root["label"].endswith("…") and len(root["full"]) == 300
    box = browser.find_element(By.ID, "provenance")
    ActionChains(browser).move_to_element_with_offset(
        box, int(root["pos"][0] - g["box"][0] / 2), int(root["pos"][1] - g["box"][1] / 2)
    ).perform()
    tip = _wait(browser, 5).until(lambda d: d.find_element(By.ID, "provenance-tip"))
    _wait(browser, 5).until(lambda d: tip.is_displayed())
    assert tip.get_property("textContent") == f"{root['full']}\nobservation · {ids['long']}"


def test_drawing_of_odd_item_ids_draws_and_opens_them(
    served_drawings: tuple[str, dict[str, str]], browser: Any
) -> None:
    base, ids = served_drawings
    g = _geometry(browser, base, ids["odd"])
    assert sorted(n["item"] for n in g["nodes"]) == sorted(ODD_IDS)
    assert [n["id"] for n in g["nodes"]] == [f"n{k}" for k in range(6)]  # ids are data only
    for item_id in ("e0", "a'b\"c]"):
        g = _geometry(browser, base, ids["odd"])
        node = next(n for n in g["nodes"] if n["item"] == item_id)
        box = browser.find_element(By.ID, "provenance")
        ActionChains(browser).move_to_element_with_offset(
            box, int(node["pos"][0] - g["box"][0] / 2), int(node["pos"][1] - g["box"][1] / 2)
        ).click().perform()
        expected = f"An item whose id is {item_id!r}"
        _wait(browser).until(
            lambda d, want=expected: d.find_element(By.ID, "item-text").text == want
        )
        assert unquote(urlsplit(browser.current_url).path) == f"/item/{item_id}"
    assert _problems(browser) == []


def _char_x(driver: Any, element_id: str, char: str, nth: int = 0) -> float:
    """The left edge on the screen of the ``nth`` ``char`` of an element's text (as laid out)."""
    return float(
        driver.execute_script(
            """
            var walker = document.createTreeWalker(document.getElementById(arguments[0]), 4);
            var seen = 0, node;
            while ((node = walker.nextNode())) {
              for (var i = 0; i < node.data.length; i++) {
                if (node.data[i] !== arguments[1]) continue;
                if (seen++ < arguments[2]) continue;
                var range = document.createRange();
                range.setStart(node, i); range.setEnd(node, i + 1);
                return range.getBoundingClientRect().left;
              }
            }
            return null;
            """,
            element_id,
            char,
            nth,
        )
    )


def test_bidi_controls_in_item_texts_cannot_reorder_what_is_shown(
    served: tuple[str, Path, Any], browser: Any, shots: Path
) -> None:
    base, _, built = served
    browser.get(base + f"/item/{built.ids['bidi']}")
    text = browser.find_element(By.ID, "item-text")
    assert text.text == "Invoice [U+202E]fdp.exe"  # not "Invoice exe.pdf"
    # laid out left to right: the "f" of fdp before the "x" of exe
    assert _char_x(browser, "item-text", "f") < _char_x(browser, "item-text", "x")
    assert _char_x(browser, "item-text", "I") < _char_x(browser, "item-text", "f")
    author = browser.find_element(By.ID, "item-author")
    assert author.text == "agent:[U+202E]aira"  # not "agent:aria", the store's own author
    assert _char_x(browser, "item-author", "i") < _char_x(browser, "item-author", "r")
    marker = author.find_element(By.CLASS_NAME, "ctl")
    assert marker.get_attribute("title") == "RIGHT-TO-LEFT OVERRIDE: shown, not applied"
    _shot(browser, shots, "5-bidi")
    # the same author as a filter: the field keeps it, the page shows what it holds
    browser.get(base + "/search?author=" + quote(BIDI_AUTHOR))
    assert "[U+202E]" in browser.find_element(By.ID, "controls").text
    assert browser.find_element(By.NAME, "author").get_attribute("value") == BIDI_AUTHOR
    assert len(browser.find_elements(By.CLASS_NAME, "hit")) == 1
    assert _problems(browser) == []


def test_a_right_to_left_value_cannot_draw_the_text_after_it_into_its_run(
    served: tuple[str, Path, Any], browser: Any
) -> None:
    base, _, built = served
    browser.get(base + "/search?q=" + quote("notes in Hebrew"))
    meta = browser.find_element(By.CSS_SELECTOR, ".hit .hit-meta")
    browser.execute_script("arguments[0].id = 'rtl-meta'", meta)
    assert f"by {RTL_AUTHOR} · 20" in meta.text
    # the date after the author stays after it: its "2" right of the author's letters
    letters = [_char_x(browser, "rtl-meta", c) for c in RTL_AUTHOR]
    assert _char_x(browser, "rtl-meta", "2") > max(letters)
    assert _char_x(browser, "rtl-meta", "b") < min(letters)  # "by" before it


def test_the_verify_now_button_of_the_overview_is_readable(
    served_drawings: tuple[str, dict[str, str]], browser: Any
) -> None:
    base, _ = served_drawings  # a store no test verifies
    browser.get(base + "/")
    button = browser.find_element(By.ID, "verify-now")
    assert button.text == "Verify now"
    colour = browser.execute_script("return getComputedStyle(arguments[0]).color", button)
    background = browser.execute_script(
        "return getComputedStyle(arguments[0]).backgroundColor", button
    )
    assert (colour, background) == ("rgb(255, 255, 255)", "rgb(31, 111, 235)")


_WIDTHS = """return [document.documentElement.scrollWidth, document.body.scrollWidth,
                 window.innerWidth];"""


def test_long_unbroken_text_keeps_every_page_within_the_window(
    served_rough: tuple[str, dict[str, str]], browser: Any, shots: Path
) -> None:
    base, ids = served_rough
    pages = {
        "search": "/search?q=",
        "search-author": "/search?author=agent%3Aaria",
        "huge": f"/item/{ids['huge']}",
        "wide": f"/item/{ids['wide']}",
        "near": f"/item/{ids['near']}",
        "log": "/log",
        "contradictions": "/contradictions",
        "overview": "/",
    }
    for name, address in pages.items():
        browser.get(base + address)
        _wait(browser).until(lambda d: d.execute_script("return document.readyState") == "complete")
        page, body, window = browser.execute_script(_WIDTHS)
        assert (name, page, body) == (name, min(page, window), min(body, window))
        _shot(browser, shots, f"rough-{name}")
    # the scores of a hit stay on screen, beside its text
    browser.get(base + "/search?q=")
    for score in browser.find_elements(By.CLASS_NAME, "scoreval"):
        right = browser.execute_script("return arguments[0].getBoundingClientRect().right", score)
        assert 0 < right <= browser.execute_script("return window.innerWidth")
    assert _problems(browser) == []


def test_every_item_id_has_a_link_the_browser_opens(
    served_rough: tuple[str, dict[str, str]], browser: Any
) -> None:
    base, _ = served_rough
    for rough_id in ROUGH_IDS:
        browser.get(base + "/log")
        links = [
            a
            for a in browser.find_elements(By.CSS_SELECTOR, "td.touched a.id")
            if a.get_dom_attribute("href") == item_address(rough_id)
        ]
        assert links, rough_id
        links[0].click()
        want = f"The item whose id is {rough_id!r}"
        _wait(browser).until(
            lambda d, want=want: (
                d.find_elements(By.ID, "item-text")
                and d.find_element(By.ID, "item-text").text == want
            )
        )
        assert urlsplit(browser.current_url).path in ("/item", "/item/" + quote(rough_id, safe=""))
    assert _problems(browser) == []


def test_the_live_link_under_a_default_as_of_follows_later_writes(
    tmp_path: Path, browser: Any
) -> None:
    path = tmp_path / "memex.db"
    build_store(path)
    with MemexStore.open(path, read_only=True) as store:
        head = store.position
    for base in _serve(path, "--as-of", "@4"):
        browser.get(base + "/log")
        assert browser.find_element(By.ID, "when-label").text == "as of @4"
        with MemexStore.open(path, author="agent:other", scope="user:ada") as writer:
            writer.remember("Ada started learning the cello")
        browser.find_element(By.LINK_TEXT, "back to now").click()
        _wait(browser).until(lambda d: "live" in d.find_element(By.ID, "when-label").text)
        assert browser.current_url.endswith("/log?as_of=live")
        assert f"latest record @{head + 1}" in browser.find_element(By.ID, "when-label").text
        # the slider moved back to the head asks for the head live, not for a position
        browser.get(base + "/")
        slider = browser.find_element(By.ID, "slider")
        slider.send_keys(Keys.END)
        _wait(browser).until(ec.url_contains("as_of=live"))
        assert "live" in browser.find_element(By.ID, "when-label").text
    assert _problems(browser) == []


def test_time_travel_and_back_to_now_use_the_real_id_not_the_displayed_one(
    tmp_path: Path, browser: Any
) -> None:
    path = tmp_path / "memex.db"
    build_travel_store(path)
    for base in _serve(path):
        for item_id in TRAVEL_IDS:
            address = item_address(item_id)
            want = f"The item whose id is {item_id!r}"
            browser.get(base + address)
            assert browser.find_element(By.ID, "item-text").text == want
            # one step back on the slider: the same item, one position earlier
            browser.find_element(By.ID, "slider").send_keys(Keys.LEFT)
            _wait(browser).until(ec.url_contains("as_of=%40"))
            _wait(browser).until(lambda d: d.find_elements(By.ID, "when-label"))
            assert browser.find_element(By.ID, "when-label").text.startswith("as of @")
            assert browser.find_element(By.ID, "item-text").text == want, item_id
            url = urlsplit(browser.current_url)
            assert url.path == "/item", item_id
            assert parse_qs(url.query, keep_blank_values=True)["id"] == [item_id]
            # the Go button with a position typed: the same item again
            field = browser.find_element(By.ID, "as-of")
            field.clear()
            field.send_keys("@9", Keys.ENTER)
            _wait(browser).until(ec.url_contains("as_of=%409"))
            assert browser.find_element(By.ID, "item-text").text == want, item_id
            # back to now: the item's own address, live
            browser.find_element(By.LINK_TEXT, "back to now").click()
            _wait(browser).until(lambda d: "as_of" not in d.current_url)
            assert browser.find_element(By.ID, "item-text").text == want, item_id
            assert browser.current_url == base + address
    assert _problems(browser) == []


def test_long_values_are_cut_in_the_overview_counts_and_linked_only_when_searchable(
    tmp_path: Path, browser: Any
) -> None:
    path = tmp_path / "memex.db"
    build_long_values_store(path)
    for base in _serve(path):
        for width in (1280, 1440):
            browser.set_window_size(width, 900)
            browser.get(base + "/")
            cells = [
                c
                for c in browser.find_elements(By.CSS_SELECTOR, "table.counts td.n")
                if c.text == "25"
            ]
            assert cells, width
            for cell in cells:  # one line: as high as the count's own line
                line = browser.execute_script(
                    "return parseFloat(getComputedStyle(arguments[0]).lineHeight)"
                    " || 1.2 * parseFloat(getComputedStyle(arguments[0]).fontSize);",
                    cell,
                )
                inner = browser.execute_script(
                    "var r = document.createRange(); r.selectNodeContents(arguments[0]);"
                    " return r.getBoundingClientRect().height;",
                    cell,
                )
                assert inner < 1.5 * line, (width, inner, line)
    browser.set_window_size(1440, 900)
    assert _problems(browser) == []


def test_the_history_by_column_does_not_break_names_mid_word(tmp_path: Path, browser: Any) -> None:
    from memex.cli import main

    path = tmp_path / "memex.db"
    example = Path(__file__).resolve().parents[1] / "docs" / "examples" / "agent_session.jsonl"
    assert main(["log", "import", str(example), "--db", str(path)]) == 0
    recipes = "018e08a6-3898-71da-8fdf-ce4bb909de1d"
    for base in _serve(path):
        for width in (1280, 1360, 1440):
            browser.set_window_size(width, 900)
            browser.get(base + f"/item/{recipes}?as_of=2024-03-13")
            cells = browser.find_elements(By.CSS_SELECTOR, "table.history td.by")
            assert cells, width
            for cell in cells:
                if not cell.text:
                    continue
                # one line: the name's inline box has one fragment
                lines = browser.execute_script(
                    "return arguments[0].querySelector('bdi').getClientRects().length;", cell
                )
                assert lines == 1, (width, cell.text, lines)
    browser.set_window_size(1440, 900)
    assert _problems(browser) == []


def test_a_log_page_past_the_last_says_the_page_size_and_the_records_and_links_the_last(
    served: tuple[str, Path, Any], browser: Any
) -> None:
    base, _, _ = served
    browser.get(base + "/log?page=4")
    card = browser.find_element(By.CSS_SELECTOR, "section.card.error")
    header = browser.find_element(By.CSS_SELECTOR, "header.top")
    gap = card.rect["y"] - (header.rect["y"] + header.rect["height"])
    assert gap >= 12, gap  # the card does not touch the navigation bar
    assert "records a page" in browser.find_element(By.ID, "error-message").text
    browser.find_element(By.ID, "error-link").click()
    _wait(browser).until(lambda d: d.find_elements(By.CSS_SELECTOR, "table.log"))
    assert "page=1" in browser.current_url
    # the console's one line: the 400 itself
    assert [p for p in _problems(browser) if "status of 400" not in p] == []


def test_the_401_page_is_styled_the_static_files_need_no_token(
    tmp_path: Path, browser: Any
) -> None:
    path = tmp_path / "memex.db"
    build_store(path)
    for base in _serve(path, "--token", "s3cret-token-for-the-test"):
        browser.delete_all_cookies()
        browser.get(base + "/")
        assert "Token needed" in browser.find_element(By.TAG_NAME, "h1").text
        header = browser.find_element(By.CSS_SELECTOR, "header.top")
        assert header.value_of_css_property("display") == "flex"  # the stylesheet applies
        card = browser.find_element(By.CSS_SELECTOR, "section.card.error")
        assert card.value_of_css_property("border-top-style") == "solid"
    assert [p for p in _problems(browser) if "status of 401" not in p] == []
