"""The app in a real browser: ``streamlit run app.py`` on 127.0.0.1 and headless Chromium.

Each page must show its title, finish its script run, draw its charts, and show no exception, no
error box, no "Traceback" and no "Page not found".  Screenshots go to a temporary folder, or to the
folder named by DPGAMES_SCREENSHOTS (``DPGAMES_SCREENSHOTS=docs/screenshots python -m pytest
tests/test_app_browser.py`` refreshes the README's pictures).

Chromium is driven through the DevTools protocol over a websocket (``websockets`` comes with
streamlit), so no browser download and no extra package is needed.  The test is skipped when
Chromium is not installed; CI installs Debian's chromium (.ci/run).
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Chromium is not installed here (CI installs Debian's "
    "chromium in .ci/run; locally: apt-get install chromium)",
)
websockets_sync = pytest.importorskip("websockets.sync.client")

WIDTH = 1400
TIMEOUT = 60.0
# (url path, title, screenshot name, a button to press (or None), a text that shows once it has been
# pressed)
PAGES = [
    ("", "Digital-goods auction", "auction", "Draw an auction", "Draw 1: price"),
    (
        "truthfulness",
        "Exact truthfulness",
        "truthfulness",
        "Set q to the exact least q",
        "Exactly truthful at q",
    ),
    ("large_games", "Large games", "large_games", None, None),
    ("anonymous_games", "General large games", "anonymous_games", None, None),
    ("privacy_budget", "Privacy budget", "privacy_budget", None, None),
    ("privacy_market", "Markets for privacy", "privacy_market", None, None),
    ("allocation", "Private allocation", "allocation", None, None),
    ("gain_curves", "Gain against a parameter", "gain_curves", None, None),
    ("scenarios", "Scenarios", "scenarios", "Run", "Result (JSON)"),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(condition, what: str, timeout: float = TIMEOUT):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


@pytest.fixture(scope="module")
def server():
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            str(ROOT / "app.py"),
            "--server.headless",
            "true",
            "--server.address",
            "127.0.0.1",
            "--server.port",
            str(port),
            "--browser.gatherUsageStats",
            "false",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"

    def healthy() -> bool:
        if proc.poll() is not None:
            raise AssertionError(f"streamlit exited: {proc.stdout.read()}")
        try:
            with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as reply:
                return reply.read() == b"ok"
        except OSError:
            return False

    try:
        wait_for(healthy, "the streamlit server")
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=20)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    proc = subprocess.Popen(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            f"--user-data-dir={tmp_path_factory.mktemp('chromium')}",
            "--remote-debugging-port=0",
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        endpoint = None
        for line in proc.stderr:  # Chromium prints its DevTools address on stderr once it listens
            found = re.search(r"DevTools listening on (ws://\S+)", line)
            if found:
                endpoint = found.group(1)
                break
        assert endpoint, "Chromium did not start its DevTools endpoint"
        with websockets_sync.connect(endpoint, max_size=None) as ws:
            yield DevTools(ws)
    finally:
        proc.terminate()
        proc.wait(timeout=20)


class DevTools:
    """A minimal Chrome DevTools Protocol client: one tab, commands answered in order."""

    def __init__(self, ws):
        self.ws = ws
        self.ids = itertools.count(1)
        self.session = None

    def call(self, method: str, **params):
        msg = {"id": next(self.ids), "method": method, "params": params}
        if self.session and not method.startswith("Target."):
            msg["sessionId"] = self.session
        self.ws.send(json.dumps(msg))
        while True:  # skip events until our answer
            reply = json.loads(self.ws.recv(timeout=TIMEOUT))
            if reply.get("id") == msg["id"]:
                if "error" in reply:
                    raise AssertionError(f"{method}: {reply['error']}")
                return reply["result"]

    def open(self, url: str, height: int = 1000) -> None:
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"
        ]
        self.size(height)
        self.call("Page.navigate", url=url)

    def size(self, height: int) -> None:
        self.call(
            "Emulation.setDeviceMetricsOverride",
            width=WIDTH,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )

    def js(self, expression: str):
        return self.call("Runtime.evaluate", expression=expression, returnByValue=True)[
            "result"
        ].get("value")

    def screenshot(self, path: Path) -> None:
        path.write_bytes(
            base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"])
        )


SCRIPT_STATE = (
    "document.querySelector('[data-testid=stApp]')?.getAttribute('data-test-script-state')"
)
CHARTS_DRAWN = (
    "(() => { const c = [...document.querySelectorAll('[data-testid=stVegaLiteChart]')];"
    " return c.length > 0 && c.every(e => e.querySelector('canvas, svg')); })()"
)
PROBLEMS = "document.querySelectorAll('[data-testid=stException], [data-testid=stAlertContentError]').length"
# Text cut off by the layout ("7,470,83..."): an element of a metric tile, a select box (its input),
# a button or a widget label that clips its content (overflow hidden, e.g. with an ellipsis) while
# its text is wider than the box that shows it.  Returns each such text in full.
TRUNCATED = (
    "(() => { const out = new Set(); const roots = document.querySelectorAll("
    "'[data-testid=stMetric], [data-baseweb=select], [data-testid=stDownloadButton], "
    "[data-testid=stButton], "
    "[data-testid=stWidgetLabel]');"
    " for (const r of roots) for (const e of [r, ...r.querySelectorAll('*')]) {"
    "  const style = getComputedStyle(e), text = (e.innerText || '').trim();"
    "  if (text && (style.overflowX !== 'visible' || style.textOverflow === 'ellipsis')"
    "      && e.scrollWidth > e.clientWidth + 1) out.add(text); }"
    " for (const e of document.querySelectorAll('[data-testid=stSelectbox] input'))"  # a select box's choice
    "  if (e.value && e.scrollWidth > e.clientWidth + 1) out.add(e.value);"
    " return [...out]; })()"
)

# A chart's text drawn outside its own picture, so the page cuts it off: a title pushed above the
# top by a long rotated axis title, legend entries below the bottom.  Vega's text boxes include the
# line's leading, so a box may poke out by a few pixels with every glyph shown; more than CLIP_SLACK
# pixels cuts glyphs.
CLIP_SLACK = 4
CHART_TEXT_CUT = (
    "(() => { const out = [];"
    " for (const svg of document.querySelectorAll('[data-testid=stVegaLiteChart] svg')) {"
    "  const s = svg.getBoundingClientRect();"
    "  for (const t of svg.querySelectorAll('text')) { const b = t.getBoundingClientRect();"
    "   if (!t.textContent.trim() || b.width === 0) continue;"
    "   if (Math.min(b.top - s.top, s.bottom - b.bottom, b.left - s.left, s.right - b.right)"
    f"       < -{CLIP_SLACK})"
    "    out.push(t.textContent.trim()); } }"
    " return out; })()"
)
# A chart label in scientific notation where plain notation is as short ("0.0e+0", "4.8e-1" on a
# legend).
CHART_SCIENTIFIC = (
    "[...document.querySelectorAll('[data-testid=stVegaLiteChart] svg text')]"
    ".map(t => t.textContent.trim())"
    ".filter(t => /^[-\\u2212]?\\d(\\.\\d+)?e[-+\\u2212]?[01]$/.test(t))"
)
# The whole page: the main column or the sidebar, whichever is longer.
PAGE_HEIGHT = (
    "Math.max(document.querySelector('[data-testid=stMain]').scrollHeight,"
    " document.querySelector('[data-testid=stSidebarContent]')?.scrollHeight || 0)"
)


def finished(tab: DevTools, title: str) -> bool:
    return (
        tab.js(SCRIPT_STATE) == "notRunning"
        and tab.js("document.querySelector('h1')?.innerText") == title
    )


@pytest.mark.parametrize("path, title, shot, button, pressed", PAGES, ids=[p[2] for p in PAGES])
def test_page_in_a_real_browser(server, browser, tmp_path, path, title, shot, button, pressed):
    tab = browser
    tab.open(f"{server}/{path}")
    wait_for(lambda: finished(tab, title), f"page {title!r} to finish its first run")
    if button is not None:
        press = (
            f"(() => {{ const b = [...document.querySelectorAll('button')]"
            f".find(e => e.innerText.trim() === {json.dumps(button)}); b?.click(); return "
            "!!b; })()"
        )
        wait_for(lambda: tab.js(press), f"a button {button!r} on {title!r}")
        wait_for(
            lambda: pressed in tab.js("document.body.innerText") and finished(tab, title),
            f"{pressed!r} on {title!r} after pressing {button!r}",
        )
    wait_for(lambda: tab.js(CHARTS_DRAWN), f"the charts of {title!r}")
    text = tab.js("document.body.innerText")
    assert title in text
    for bad in ("Traceback", "Page not found", "Error running app"):
        assert bad not in text, f"{bad!r} on page {title!r}"
    assert tab.js(PROBLEMS) == 0, f"an exception or error box on page {title!r}"
    assert (
        tab.js("document.querySelectorAll('[data-testid=stMetric]').length") > 0
        or shot == "scenarios"
    )
    assert tab.js(TRUNCATED) == [], f"text cut off on page {title!r}"

    folder = Path(os.environ.get("DPGAMES_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    tab.size(int(tab.js(PAGE_HEIGHT)) + 40)
    time.sleep(1.0)  # let the charts re-lay themselves out at the new size
    tab.screenshot(folder / f"{shot}.png")
    assert (folder / f"{shot}.png").stat().st_size > 10_000
    assert tab.js(CHART_TEXT_CUT) == [], f"chart text cut off on page {title!r}"
    assert tab.js(CHART_SCIENTIFIC) == [], (
        f"chart labels in needless scientific notation on page {title!r}"
    )


def click_at(tab: DevTools, expression: str) -> bool:
    """A real mouse click (pressed, released) at the centre of the element ``expression`` finds."""
    where = tab.js(
        f"(() => {{ const e = {expression}; if (!e) return null; "
        "e.scrollIntoView({block: 'center'});"
        " const b = e.getBoundingClientRect(); return [b.x + b.width / 2, b.y + b.height / 2]; })()"
    )
    if where is None:
        return False
    for kind in ("mousePressed", "mouseReleased"):
        tab.call(
            "Input.dispatchMouseEvent",
            type=kind,
            x=where[0],
            y=where[1],
            button="left",
            clickCount=1,
        )
    return True


def test_road_network_totals_are_not_cut_off(server, browser):
    """Sioux Falls' total costs (millions) show in full in their tiles (they used to read
    "7,470,83...")."""
    from dpgames.scenarios.large_game import data_roots

    if not (data_roots()[0] / "SiouxFalls").is_dir():
        pytest.skip("no TNTP folder SiouxFalls (set DPGAMES_TNTP_DIR)")
    tab = browser
    tab.open(f"{server}/large_games")
    wait_for(lambda: finished(tab, "Large games"), "the large games page")
    opener = (
        "[...document.querySelectorAll('[data-testid=stSelectbox]')].find(e => "
        "e.innerText.startsWith('Network'))"
        "?.querySelector('button[aria-label=Open]')"
    )
    option = "[...document.querySelectorAll('[role=option]')].find(e => e.innerText.trim() === 'TNTP: SiouxFalls')"

    def choose() -> bool:
        # a click that lands while the page still re-renders opens nothing: open it again
        if click_at(tab, option):
            return True
        if not tab.js("document.querySelectorAll('[role=option]').length"):
            click_at(tab, opener)
            time.sleep(0.5)
        return False

    wait_for(choose, "the option TNTP: SiouxFalls in the network select box")
    values = (
        "[...document.querySelectorAll('[data-testid=stMetricValue]')].map(e => e.innerText.trim())"
    )
    shown = wait_for(
        lambda: finished(tab, "Large games") and [v for v in tab.js(values) if len(v) >= 9],
        "Sioux Falls' totals",
    )
    # millions, thousands separated
    assert all(re.fullmatch(r"\d,\d{3},\d{3}", v) for v in shown), shown
    assert tab.js(TRUNCATED) == [], "text cut off on Sioux Falls"
