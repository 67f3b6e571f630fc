"""Robot keywords for `lowtide dashboard` seen in a real browser: the ledger built
(`features/support/dashboard_ledgers.py`, shared with the behave scenarios), the command started as a process on a
loopback port, and Debian's headless Chromium driven through selenium and Debian's chromedriver (nothing downloaded:
selenium is told both paths, found on PATH, and to stay offline). Screenshots go to build/dashboard/, kept by CI as
artifacts.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import sys
import tempfile
import threading
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any, cast

import httpx
from robot.api import logger
from robot.api.deco import keyword, library
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webelement import WebElement

from _processes import Process, lowtide_command, whom_file_modes_stop
from lowtide.dashboard.app import build_app
from lowtide.dashboard.data import DashboardData
from lowtide.http.server import app_in_thread
from lowtide.ledger.interface import LedgerStore
from lowtide.ledger.sqlite import Ledger
from lowtide.ledger.store import open_ledger
from lowtide.ledger.views import LedgerViews, RunProgress

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "features" / "support"))
import dashboard_ledgers  # features/support, shared with the behave scenarios

SCREENSHOTS = Path("build/dashboard")
LISTENING = re.compile(r"lowtide dashboard listening on (http://\S+)")
_WAIT = 20.0


class _HeldViews:
    """A store's views whose run counts wait until released."""

    def __init__(self, views: LedgerViews, release: threading.Event) -> None:
        self._views = views
        self._release = release

    def run_progress(self, run_id: str) -> RunProgress | None:
        assert self._release.wait(120), "the held counts were never released"
        return self._views.run_progress(run_id)

    def __getattr__(self, name: str) -> object:
        return getattr(self._views, name)


class _HeldCounts:
    """A store whose run counts wait until `release` is set; everything else as the store answers it."""

    def __init__(self, store: LedgerStore) -> None:
        self._store = store
        self.release = threading.Event()
        self.views = _HeldViews(store.views, self.release)

    def __getattr__(self, name: str) -> object:
        return getattr(self._store, name)


@library(scope="SUITE", auto_keywords=False)
class DashboardLibrary:
    def __init__(self) -> None:
        self._workdir = Path(tempfile.mkdtemp(prefix="lowtide-dashboard-"))
        self._processes: list[Process] = []
        self._last: Process | None = None
        """The dashboard started last, stopped or not (what it printed is read after it stops)."""
        self._browser: webdriver.Chrome | None = None
        self._profile: str | None = None
        self.url = ""
        self.reach = ""
        """Where the dashboard started last is reached: its address, or, beyond loopback, that on 127.0.0.1."""
        self._held: _HeldCounts | None = None
        self._held_server = ExitStack()

    # ledgers

    @keyword("Build Dashboard Ledger")
    def build_dashboard_ledger(self, name: str) -> str:
        """A SQLite ledger file holding the tests' runs, batches, failures and parked call; closed, so that nothing
        of it waits in a -wal file. Returns its path."""
        folder = self._workdir / name
        folder.mkdir()
        path = folder / "ledger.sqlite3"
        store = Ledger(path)
        try:
            dashboard_ledgers.build(store)
        finally:
            store.close()
        return str(path)

    @keyword("Build Dashboard Ledger In")
    def build_dashboard_ledger_in(self, url: str) -> None:
        """The tests' runs, batches, failures and parked call written into the (empty) ledger at `url`, any store."""
        store = open_ledger(url)
        try:
            dashboard_ledgers.build(store)
        finally:
            store.close()

    @keyword("Build Large Dashboard Ledger")
    def build_large_dashboard_ledger(self, name: str, items: int) -> str:
        """A SQLite ledger file holding one run of `items` requests, all waiting in one batch. Returns its path."""
        folder = self._workdir / name
        folder.mkdir()
        path = folder / "ledger.sqlite3"
        store = Ledger(path)
        try:
            dashboard_ledgers.build_large(store, int(items))
        finally:
            store.close()
        return str(path)

    @keyword("Answer The Waiting Batch In")
    def answer_the_waiting_batch_in(self, path: str) -> None:
        """The run in progress's last batch ends, written by another process's connection (this one's)."""
        store = Ledger(path)
        try:
            dashboard_ledgers.answer_waiting(store)
        finally:
            store.close()

    @keyword("Custom Id Of The Parked Call In")
    def custom_id_of_the_parked_call_in(self, path: str) -> str:
        store = Ledger(path, read_only=True)
        try:
            record = store.request(dashboard_ledgers.PARKED_KEY)
            assert record is not None
            return record.custom_id
        finally:
            store.close()

    @keyword("Make Read Only")
    def make_read_only(self, path: str) -> str:
        """The file 0444 in a folder 0555; returns the file's digest."""
        Path(path).chmod(0o444)
        Path(path).parent.chmod(0o555)
        return self.digest_of(path)

    @keyword("Digest Of")
    def digest_of(self, path: str) -> str:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()

    @keyword("Files Beside")
    def files_beside(self, path: str) -> list[str]:
        return sorted(p.name for p in Path(path).parent.iterdir())

    # the command

    @keyword("Start Dashboard")
    def start_dashboard(self, ledger: str, *options: str, whom_modes_stop: bool = False) -> str:
        """`lowtide dashboard --ledger LEDGER --port 0 OPTIONS` as a process (with `whom_modes_stop`, as a user whom
        file modes stop: `whom_file_modes_stop`); returns the address it printed."""
        argv = [*lowtide_command(), "dashboard", "--ledger", ledger, "--port", "0", *options]
        if whom_modes_stop:
            argv = whom_file_modes_stop(argv)
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        return self._started(Process(argv, self._workdir, f"dashboard-{len(self._processes) + 1}", env))

    def _started(self, process: Process) -> str:
        self._processes.append(process)
        self._last = process
        deadline = time.monotonic() + 60
        while (found := LISTENING.search(process.stdout)) is None:
            if process.popen.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"lowtide dashboard did not start:\n{process.stdout}\n{process.stderr}")
            time.sleep(0.05)
        self.url = self.reach = found.group(1)
        logger.info(f"lowtide dashboard: {process.stdout}")
        return self.url

    @keyword("Start Dashboard Beyond Loopback")
    def start_dashboard_beyond_loopback(self, ledger: str, host: str, *options: str, token_env: str = "") -> str:
        """`lowtide dashboard --ledger LEDGER --host HOST --port 0 OPTIONS` (with `LOWTIDE_DASHBOARD_TOKEN` set to
        `token_env`, if given) as a user would run it on a host's public address, though its socket listens on
        127.0.0.1 (`_bound_to_loopback.py`); returns the address it printed, which names HOST."""
        launcher = str(Path(__file__).resolve().parent / "_bound_to_loopback.py")
        argv = [sys.executable, launcher, "dashboard", "--ledger", ledger, "--host", host, "--port", "0", *options]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        env.pop("LOWTIDE_DASHBOARD_TOKEN", None)
        if token_env:
            env["LOWTIDE_DASHBOARD_TOKEN"] = token_env
        url = self._started(Process(argv, self._workdir, f"dashboard-{len(self._processes) + 1}", env))
        self.reach = self.loopback_address_of(url)
        return url

    @keyword("Loopback Address Of")
    def loopback_address_of(self, url: str) -> str:
        """`url` with its host the one the server listens on (127.0.0.1): where a test may reach it."""
        return re.sub(r"^http://[^/]+:(\d+)", r"http://127.0.0.1:\1", url)

    @keyword("Times Printed")
    def times_printed(self, text: str) -> int:
        """How many times `text` appears in what the dashboard started last printed (stdout and stderr)."""
        return self.dashboard_output().count(text)

    @keyword("Token Cookie")
    def token_cookie(self) -> dict[str, Any]:
        """The dashboard's cookie in the browser, as it holds it (name, value, httpOnly, sameSite...)."""
        found = self.browser.get_cookie("lowtide_dashboard")
        assert found is not None, f"no lowtide_dashboard cookie: {self.browser.get_cookies()}"
        return dict(found)

    @keyword("Lowtide Command Line")
    def lowtide_command_line(self) -> list[str]:
        return lowtide_command()

    @keyword("Dashboard Output")
    def dashboard_output(self) -> str:
        assert self._last is not None, "Start Dashboard first"
        return self._last.stdout + self._last.stderr

    @keyword("Stop Dashboard")
    def stop_dashboard(self) -> None:
        while self._processes:
            process = self._processes.pop()
            process.stop()
            logger.info(f"{process.name} stderr:\n{process.stderr}")
        if self._held is not None:
            self._held.release.set()
            self._held = None
        self._held_server.close()

    @keyword("Start Dashboard Whose Counts Are Held")
    def start_dashboard_whose_counts_are_held(self, ledger: str) -> str:
        """The dashboard's own app over `ledger`, served from this process on a loopback port, its counts of a run
        held until `Release The Held Counts` (a run too large to count at once, made so on purpose): the Runs page
        must show such a run as being counted, then with its counts. Returns its address."""
        store = Ledger(ledger, read_only=True)
        self._held_server.callback(store.close)
        self._held = _HeldCounts(store)
        data = DashboardData(store, counting=cast(LedgerStore, self._held))  # reads as the store reads
        app = build_app(data, token=None, refresh_seconds=0.5)
        url, _ = self._held_server.enter_context(app_in_thread(app))
        self.url = self.reach = url.rstrip("/") + "/"
        return self.url

    @keyword("Release The Held Counts")
    def release_the_held_counts(self) -> None:
        assert self._held is not None, "Start Dashboard Whose Counts Are Held first"
        self._held.release.set()

    @keyword("Ask The Dashboard")
    def ask_the_dashboard(self, path: str, token: str | None = None) -> tuple[int, str]:
        """GET `path` of the dashboard with no cookie (and `token` as a bearer token, if given)."""
        base = re.sub(r"/(\?.*)?$", "", self.reach)
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        answer = httpx.get(f"{base}{path}", headers=headers, timeout=30)
        return answer.status_code, answer.text

    # the browser

    @keyword("Open Browser")
    def open_browser(self) -> None:
        """Debian's Chromium, headless, with a fresh profile, as the closed network needs it started."""
        chromium, chromedriver = shutil.which("chromium"), shutil.which("chromedriver")
        if chromium is None or chromedriver is None:  # nox installs them first: features/support/system_packages.py
            raise AssertionError("chromium and chromedriver are needed: apt-get install chromium chromium-driver")
        self._profile = tempfile.mkdtemp(prefix="chromium-", dir=self._workdir)
        options = webdriver.ChromeOptions()
        options.binary_location = chromium
        for argument in (
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--window-size=1280,1000",
            f"--user-data-dir={self._profile}",
        ):
            options.add_argument(argument)
        os.environ["SE_OFFLINE"] = "true"  # selenium never looks for a driver or a browser on the network
        self._browser = webdriver.Chrome(options=options, service=Service(chromedriver))
        self._browser.set_page_load_timeout(30)

    @keyword("Close Browser")
    def close_browser(self) -> None:
        if self._browser is not None:
            self._browser.quit()
            self._browser = None

    @property
    def browser(self) -> webdriver.Chrome:
        assert self._browser is not None, "Open Browser first"
        return self._browser

    @keyword("Go To")
    def go_to(self, address: str) -> None:
        self.browser.get(address)

    @keyword("Current Address")
    def current_address(self) -> str:
        return str(self.browser.current_url)

    @keyword("Show Page")
    def show_page(self, name: str) -> None:
        """Click the page's link in the dashboard's navigation."""
        self.browser.find_element(By.ID, f"nav-{name}").click()

    # The page redraws itself every refresh: every read below is one script, run between two redraws, so that it
    # never holds an element a redraw has replaced.

    @keyword("Text Of")
    def text_of(self, css: str) -> str:
        """The text of the first element `css` selects, once it is there (waiting up to 20 s)."""
        return self._wait(lambda: (self._texts(css) or [None])[0], css)

    @keyword("Wait Until Text Of Is")
    def wait_until_text_of_is(self, css: str, expected: str) -> None:
        self._wait(lambda: (self._texts(css) or [None])[0] == expected or None, f"{css} to read {expected!r}", css)

    @keyword("Wait Until Page Contains")
    def wait_until_page_contains(self, text: str) -> None:
        self._wait(lambda: text in self._texts("body")[0] or None, repr(text))

    @keyword("Count Of")
    def count_of(self, css: str) -> int:
        return len(self._texts(css))

    @keyword("Texts Of")
    def texts_of(self, css: str) -> list[str]:
        """The texts of every element `css` selects (read at once), once there is one."""
        return self._wait(lambda: self._texts(css) or None, css)

    @keyword("Fact Of")
    def fact_of(self, scope: str, fact: str) -> str:
        """The value shown for `fact` (its `data-fact`) inside the element `scope` selects."""
        return self.text_of(f'{scope} [data-fact="{fact}"] .value')

    @keyword("Chart Is Drawn")
    def chart_is_drawn(self, name: str, series: str) -> int:
        """The chart `name` has a drawn line for `series` with at least one point; returns its points."""
        script = (
            "const c = document.querySelector(arguments[0]);"
            "const p = c && c.querySelector(arguments[1]);"
            "return p && p.getAttribute('d') ? Number(c.getAttribute('data-points')) : null;"
        )
        chart = f'svg[data-chart="{name}"]'
        found = self._wait(lambda: self.browser.execute_script(script, chart, f'path[data-series="{series}"]'), chart)
        return int(found)

    @keyword("Search Request")
    def search_request(self, text: str) -> None:
        field = self._first("#request-id")
        field.clear()
        field.send_keys(text)
        self._first("#request-form button").click()

    @keyword("Updates Seen")
    def updates_seen(self) -> int:
        return int(self._first("#status").get_attribute("data-updates") or 0)

    @keyword("Take Screenshot")
    def take_screenshot(self, name: str) -> str:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        self.browser.save_screenshot(str(path))
        logger.info(f'<img src="{path.absolute()}" width="800">', html=True)
        return str(path)

    @keyword("Clean Up")
    def clean_up(self) -> None:
        self.close_browser()
        self.stop_dashboard()
        for folder in self._workdir.rglob("*"):
            if folder.is_dir():
                folder.chmod(0o755)
        shutil.rmtree(self._workdir, ignore_errors=True)

    def _texts(self, css: str) -> list[str]:
        script = "return Array.from(document.querySelectorAll(arguments[0]), (e) => e.innerText.trim());"
        return list(self.browser.execute_script(script, css))

    def _first(self, css: str) -> WebElement:
        return self._wait(lambda: (self.browser.find_elements(By.CSS_SELECTOR, css) or [None])[0], css)

    def _wait(self, probe: Any, what: str = "", css: str | None = None) -> Any:
        deadline = time.monotonic() + _WAIT
        last: object = None
        while True:
            try:
                found = probe()
            except (StaleElementReferenceException, WebDriverException) as exc:
                found, last = None, exc
            if found:
                return found
            if time.monotonic() > deadline:
                shown = self._texts(css)[:1] if css else ""
                raise AssertionError(f"waited {_WAIT:.0f} s for {what or 'the page'}: {shown!r} {last or ''}")
            time.sleep(0.1)
