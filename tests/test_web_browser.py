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

import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memex import MemexStore
from tests.test_web import build_store

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


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, Any]]:
    path = tmp_path_factory.mktemp("browser") / "memex.db"
    built = build_store(path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "memex", "serve", "--db", str(path), "--port", "0"],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        found = re.search(r"(http://127\.0\.0\.1:\d+/)", line)
        assert found, line
        yield found.group(1).rstrip("/"), path, built
    finally:
        proc.terminate()
        proc.wait(10)


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
