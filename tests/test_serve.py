"""`annotator serve` in a real browser: Debian's chromium, headless, driven by Playwright.

Each key typed into the page must be on disk (read through a fresh connection) before the next;
two people label the same golden under their own names; a closed page reopens where it was;
a killed server loses nothing; names come from the URL, a form, or a proxy's header; and no
request leaves 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from annotator.place import is_url
from annotator.store.session import Session
from tests.conftest import banking_file
from tests.test_report_html import ARGS, CHROMIUM
from tests.waiting import PATIENCE, wait_until

"""The longest a key may take to reach the file (a tab's process starting on a busy machine)."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Served:
    """`annotator serve` running on a free port, its output kept."""

    def __init__(self, db: str | Path, *options: str) -> None:
        self.port = free_port()
        self.db = db
        self.process = subprocess.Popen(
            [sys.executable, "-m", "annotator", "serve", str(db), "--port", str(self.port),
             *options], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            start_new_session=True)
        self.url = f"http://127.0.0.1:{self.port}"
        wait_until(self._answers, "the server to answer")

    def _answers(self) -> bool:
        """Whether the server answers (failing at once, with its output, if it has ended)."""
        try:
            urllib.request.urlopen(self.url + "/dashboard", timeout=PATIENCE).read()
        except urllib.error.HTTPError:  # an answer all the same (no dashboard, say)
            pass
        except (urllib.error.URLError, ConnectionError):
            assert self.process.poll() is None, f"the server ended: {self.output()}"
            return False
        return True

    def output(self) -> str:
        if self.process.poll() is None:
            return ""
        out, err = self.process.communicate()
        return out + err

    def get(self, path: str, headers: dict[str, str] | None = None) -> tuple[int, str]:
        request = urllib.request.Request(self.url + path, headers=headers or {})
        try:
            with urllib.request.urlopen(request, timeout=PATIENCE) as reply:
                return reply.status, reply.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):  # whatever of its group is left
            os.killpg(self.process.pid, signal.SIGKILL)
        if self.process.poll() is None:
            self.process.wait(PATIENCE)


def labels(db: str | Path, who: str) -> list[tuple[str, int, int, str]]:
    """(golden, rank, verdict, action) of someone's decisions, through a fresh connection (a
    file's, or a PostgreSQL database's)."""
    if is_url(db):
        with Session(db, create=False) as session:
            return [tuple(row) for row in session.conn.execute(
                "SELECT c.golden_id, c.rank, l.verdict, l.action FROM labels l JOIN chunks c "
                "ON c.id = l.chunk_id WHERE l.annotator = ? AND l.verdict IS NOT NULL "
                "ORDER BY l.updated_at, l.id", [who])]
    with sqlite3.connect(db) as conn:
        return conn.execute(
            "SELECT c.golden_id, c.rank, l.verdict, l.action FROM labels l JOIN chunks c "
            "ON c.id = l.chunk_id WHERE l.annotator = ? AND l.verdict IS NOT NULL "
            "ORDER BY l.updated_at, l.id", [who]).fetchall()


@pytest.fixture
def browser() -> Iterator[Browser]:
    assert Path(CHROMIUM).exists(), "Debian's chromium is needed: apt-get install chromium"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield browser
        finally:
            browser.close()


def open_screen(browser: Browser, url: str, requests: list[str],
                headers: dict[str, str] | None = None) -> Page:
    """A page on the served screen, once its first bytes arrived."""
    context = browser.new_context(viewport={"width": 1400, "height": 900},
                                  extra_http_headers=headers or {})
    page = context.new_page()
    page.on("request", lambda r: requests.append(r.url))
    page.on("websocket", lambda w: requests.append(w.url))
    page.goto(url, wait_until="load")
    page.wait_for_selector("body.-first-byte", timeout=PATIENCE * 1000)
    # Keys go to the terminal's input (a click would also select the chunk under it).
    page.focus(".xterm-helper-textarea")
    return page


def press(page: Page, db: str | Path, who: str, key: str, expect: int) -> list[tuple[str, int, int, str]]:
    """Type a key into the page and wait until the person's decisions number ``expect``."""
    page.keyboard.press(key)
    return wait_until(lambda: now if len(now := labels(db, who)) == expect else [],
                      f"{who}'s key {key} on disk")


def test_keys_typed_in_the_browser_are_on_disk_for_each_person_and_a_page_resumes(
        tmp_path: Path, browser: Browser) -> None:
    db = banking_file(tmp_path / "team.db", people=())
    server = Served(db)
    requests: list[str] = []
    try:
        alice = open_screen(browser, server.url + "/?annotator=alice", requests)
        first = press(alice, db, "alice", "a", 1)
        assert first[0][3] == "accept"
        assert press(alice, db, "alice", "f", 2)[1][3] == "flip"
        assert press(alice, db, "alice", "1", 3)[2][2:] == (1, "set")
        assert press(alice, db, "alice", "u", 2) == [*first, labels(db, "alice")[1]]
        golden = first[0][0]
        # A second person on the same golden: her own labels, his own.
        bob = open_screen(browser, server.url + "/?annotator=bob", requests)
        assert press(bob, db, "bob", "a", 1)[0][:2] == (golden, 1)
        assert len(labels(db, "alice")) == 2
        # A second tab under a name already open is refused with a sentence.
        status, text = server.get("/?annotator=alice")
        assert status == 409 and "already has the annotation screen open" in text
        # Closing the page mid-golden and opening it again continues on that golden.
        alice.context.close()
        wait_until(lambda: server.get("/?annotator=alice")[0] == 200, "alice's screen closed")
        again = open_screen(browser, server.url + "/?annotator=alice", requests)
        after = press(again, db, "alice", "a", 3)
        assert after[2][0] == golden and after[2][1] == 3
    finally:
        server.kill()
    assert requests and all(url.startswith(("http://127.0.0.1:", "ws://127.0.0.1:"))
                            for url in requests), requests


def test_killing_the_server_loses_no_decision_shown(place: str | Path, browser: Browser) -> None:
    db = banking_file(place, people=())
    server = Served(db)
    try:
        page = open_screen(browser, server.url + "/?annotator=carol", [])
        for n in range(1, 6):
            press(page, db, "carol", "a" if n % 2 else "f", n)
    finally:
        server.kill()
    assert [action for *_, action in labels(db, "carol")] == [
        "accept", "flip", "accept", "flip", "accept"]


def test_names_come_from_the_url_a_form_or_the_proxy_header(tmp_path: Path,
                                                           browser: Browser) -> None:
    db = banking_file(tmp_path / "team.db", people=())
    server = Served(db, "--dashboard")
    try:
        status, text = server.get("/")
        assert status == 200 and '<form method="get" action="/">' in text
        status, text = server.get("/?annotator=" + "%3Cscript%3E")
        assert status == 400 and "<script>" not in text and "is not one" in text
        status, text = server.get("/dashboard")
        assert status == 200 and "nobody has labelled yet" in text
    finally:
        server.kill()
    proxied = Served(db, "--user-header", "X-Forwarded-User")
    try:
        status, text = proxied.get("/?annotator=mallory")
        assert status == 400 and "X-Forwarded-User" in text
        page = open_screen(browser, proxied.url + "/?annotator=mallory", [],
                           headers={"X-Forwarded-User": "dana"})
        press(page, db, "dana", "a", 1)
        assert labels(db, "mallory") == []
    finally:
        proxied.kill()


def test_listening_beyond_this_machine_warns_that_anyone_can_label(tmp_path: Path) -> None:
    db = banking_file(tmp_path / "team.db", people=())
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "annotator", "serve", str(db), "--host", "0.0.0.0", "--port",
         str(port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
    finally:
        process.kill()
        process.communicate()
    assert line.startswith("Warning: listening on 0.0.0.0: anyone who can reach port")


def test_a_served_sample_and_adjudication_reach_every_tab(tmp_path: Path, browser: Browser) -> None:
    db = banking_file(tmp_path / "team.db", people=("sample-reviewer", "second-reviewer"))
    with sqlite3.connect(db) as conn:
        disputed = conn.execute(
            "SELECT count(*) FROM (SELECT chunk_id FROM labels GROUP BY chunk_id "
            "HAVING count(DISTINCT verdict) > 1)").fetchone()[0]
    assert disputed  # the two sample reviewers differ on some chunks
    server = Served(db, "--adjudicate")
    try:
        page = open_screen(browser, server.url + "/?annotator=erin", [])
        page.keyboard.press("1")
        gold = wait_until(lambda: sqlite3.connect(db).execute(
            "SELECT decided_by, verdict FROM gold_labels").fetchall(), "erin's gold label")
        assert gold == [("erin", 1)]
    finally:
        server.kill()
    sampled = Served(db, "--sample", "3", "--seed", "2")
    try:
        page = open_screen(browser, sampled.url + "/?annotator=fay", [])
        with sqlite3.connect(db) as conn:
            (sample,) = conn.execute("SELECT value FROM settings WHERE key = 'random_sample'"
                                     ).fetchone()
        first = json.loads(sample)["golden_ids"][0]
        assert press(page, db, "fay", "a", 1)[0][0] == first  # the sample's first golden
    finally:
        sampled.kill()
    # erin's gold label makes its golden an attention check, which every tab may be shown.
    checked = Served(db, "--checks", "1")
    try:
        page = open_screen(browser, checked.url + "/?annotator=gil", [])
        for n in range(1, 6):  # the first golden, whole: a check comes next
            press(page, db, "gil", "a", n)
        page.keyboard.press("a")
        answered = wait_until(lambda: sqlite3.connect(db).execute(
            "SELECT annotator, rank FROM check_answers").fetchall(), "gil's check answer")
        assert answered == [("gil", 1)] and len(labels(db, "gil")) == 5  # apart from labels
    finally:
        checked.kill()


def test_a_port_already_in_use_is_a_sentence(tmp_path: Path) -> None:
    db = banking_file(tmp_path / "team.db", people=())
    first = Served(db)
    try:
        second = subprocess.run(
            [sys.executable, "-m", "annotator", "serve", str(db), "--port", str(first.port)],
            capture_output=True, text=True, timeout=PATIENCE)
    finally:
        first.kill()
    assert second.returncode == 1 and "Traceback" not in second.stderr
    assert f"127.0.0.1:{first.port} is in use" in second.stderr
    assert "choose another with --port" in second.stderr


def descendants(pid: int) -> set[int]:
    """Every process below ``pid``, read from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def alive(pid: int) -> bool:
    """Running (a zombie waiting for its parent is not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_a_killed_server_takes_its_warm_process_and_tabs_with_it(tmp_path: Path,
                                                                  browser: Browser) -> None:
    db = banking_file(tmp_path / "team.db", people=())
    server = Served(db)
    try:
        page = open_screen(browser, server.url + "/?annotator=carol", [])
        press(page, db, "carol", "a", 1)
        below = wait_until(
            lambda: d if len(d := descendants(server.process.pid)) >= 2 else set(),
            "the warm process and a tab")
        os.kill(server.process.pid, signal.SIGKILL)  # the server alone, as the OOM killer would
        server.process.wait(PATIENCE)
        wait_until(lambda: not any(alive(pid) for pid in below), "the warm process and tab to exit")
    finally:
        server.kill()


def test_tabs_are_capped_look_alike_names_asked_and_only_the_proxy_may_name(
        tmp_path: Path, browser: Browser) -> None:
    db = banking_file(tmp_path / "team.db")  # labelled by sample-reviewer
    server = Served(db, "--max-tabs", "1")
    try:
        status, text = server.get("/?annotator=Sample-Reviewer")
        assert status == 409 and "only by case or spacing" in text
        assert 'href="/?annotator=sample-reviewer"' in text and "new=1" in text
        status, _ = server.get("/?annotator=Sample-Reviewer&new=1")
        assert status == 200  # a different person after all
        page = open_screen(browser, server.url + "/?annotator=carol", [])
        press(page, db, "carol", "a", 1)
        status, text = server.get("/?annotator=dave")
        assert status == 503 and "1 annotation screens are open" in text and "--max-tabs" in text
    finally:
        server.kill()
    around = Served(db, "--user-header", "X-Forwarded-User", "--trusted-proxy", "10.9.9.9")
    try:
        status, text = around.get("/", headers={"X-Forwarded-User": "mallory"})
        assert status == 400 and "only from its proxy at 10.9.9.9/32" in text
        assert "127.0.0.1" in text
    finally:
        around.kill()
    through = Served(db, "--user-header", "X-Forwarded-User", "--trusted-proxy", "127.0.0.1")
    try:
        status, _ = through.get("/", headers={"X-Forwarded-User": "dana"})
        assert status == 200
    finally:
        through.kill()
    alone = subprocess.run([sys.executable, "-m", "annotator", "serve", str(db),
                            "--trusted-proxy", "127.0.0.1"], capture_output=True, text=True,
                           timeout=PATIENCE)
    assert alone.returncode == 2 and "give --user-header HEADER too" in alone.stderr


def test_two_serve_processes_share_one_team_with_a_quota_and_a_closed_tab_frees_its_golden(
        place: str | Path, browser: Browser) -> None:
    db = banking_file(place, people=())
    quota = ("--per-golden", "1", "--dashboard")
    first, second = Served(db, *quota), Served(db, *quota)
    try:
        alice = open_screen(browser, first.url + "/?annotator=alice", [])
        golden = press(alice, db, "alice", "a", 1)[0][0]
        bob = open_screen(browser, second.url + "/?annotator=bob", [])
        assert press(bob, db, "bob", "a", 1)[0][0] != golden  # alice holds hers: passed over
        # Each process's dashboard shows everyone, and the goldens taken.
        def both_shown(server: Served) -> str:
            page = server.get("/dashboard")[1]
            return page if "alice" in page and "bob" in page else ""

        for server in (first, second):  # a dashboard is read again every few seconds
            page = wait_until(functools.partial(both_shown, server),
                              "both people on the dashboard")
            assert "Goldens taken" in page and golden in page
        # alice closes her tab mid-golden: it goes back to the pool, for carol on the other.
        alice.context.close()
        wait_until(lambda: first.get("/?annotator=alice")[0] == 200, "alice's screen closed")
        carol = open_screen(browser, second.url + "/?annotator=carol", [])
        assert press(carol, db, "carol", "a", 1)[0][0] == golden
    finally:
        first.kill()
        second.kill()
