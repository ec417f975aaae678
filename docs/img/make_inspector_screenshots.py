"""Take the screenshots of docs/howto/inspecting.md and the README: ``memex serve`` on the example store.

    .venv/bin/python docs/img/make_inspector_screenshots.py

Imports docs/examples/agent_session.jsonl into a store in a temporary
directory (as the README's first command does), runs ``memex serve`` on a free
port, and saves what Debian's headless Chromium (``/usr/bin/chromium``,
``/usr/bin/chromedriver``; nothing is downloaded) shows at 1280 columns:

* ``inspector_overview.png``: the overview;
* ``inspector_search.png``: a question with its explanations;
* ``inspector_item.png``: an item with its provenance, relations and history;
* ``inspector_time_travel.png``: an item as it was on 2024-03-08, with the slider.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

HERE = Path(__file__).resolve().parent
EXAMPLE = HERE.parent / "examples" / "agent_session.jsonl"
HYPOTHESIS = "018e1533-2080-731d-bc9e-bdc0ca7d6d73"  # "Ada may be training for a half marathon"
RECIPES = "018e08a6-3898-71da-8fdf-ce4bb909de1d"  # superseded on 2024-03-11
SHOTS = {
    "inspector_overview.png": ("/", 1100),
    "inspector_search.png": ("/search?q=what+can+Ada+eat%3F", 1000),
    "inspector_item.png": (f"/item/{HYPOTHESIS}", 1500),
    "inspector_time_travel.png": (f"/item/{RECIPES}?as_of=2024-03-08", 1000),
}


def main() -> None:
    os.environ["SE_OFFLINE"] = "true"
    work = Path(tempfile.mkdtemp(prefix="memex-shots-"))
    db = work / "memex.db"
    memex = [sys.executable, "-m", "memex"]
    subprocess.run([*memex, "log", "import", str(EXAMPLE), "--db", str(db)], check=True)
    server = subprocess.Popen(
        [*memex, "serve", "--db", str(db), "--port", "0"], stderr=subprocess.PIPE, text=True
    )
    try:
        assert server.stderr is not None
        found = re.search(r"(http://127\.0\.0\.1:\d+)/", server.stderr.readline())
        assert found is not None
        base = found.group(1)
        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        for flag in (
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
            f"--user-data-dir={work / 'profile'}",
        ):
            options.add_argument(flag)
        driver = webdriver.Chrome(
            service=Service(executable_path="/usr/bin/chromedriver"), options=options
        )
        try:
            for name, (url, height) in SHOTS.items():
                driver.set_window_size(1280, height)
                driver.get(base + url)
                time.sleep(1.0)  # the drawing's layout settles
                driver.save_screenshot(str(HERE / name))
                print(f"wrote docs/img/{name}")
        finally:
            driver.quit()
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    main()
