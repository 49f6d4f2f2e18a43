"""A session in a read-only place: the commands that only read work on it where it is; every
other command says the place is read-only in one sentence, exits 2 and leaves no file."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import banking_file, second_opinion

UNPRIVILEGED = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", "--"]
"""As root (CI is), file permissions bind only once these capabilities are dropped."""


def run(*args: str) -> subprocess.CompletedProcess[str]:
    """The CLI in a process that file permissions bind, root or not."""
    prefix = UNPRIVILEGED if os.geteuid() == 0 else []
    return subprocess.run([*prefix, sys.executable, "-m", "annotator", *args],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "200"})


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[Path]:
    """A read-only folder holding a session two people labelled."""
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        pytest.fail("these tests need setpriv (util-linux) to run as root")
    place = tmp_path / "shared"
    place.mkdir()
    path = banking_file(place / "team.db")
    from annotator.store.session import Session

    with Session(path) as s:
        second_opinion(s, "bob", set(next(iter(s.chunk_ids().values()))[:2]))
    place.chmod(stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP)
    yield place
    place.chmod(0o755)


def listing(place: Path) -> list[str]:
    return sorted(p.name for p in place.iterdir())


def test_readers_work_on_a_session_in_a_read_only_folder(folder: Path) -> None:
    before = listing(folder)
    db = str(folder / "team.db")
    report = run("report", db, "--annotator", "bob", "--format", "json", "--bootstrap", "50")
    assert report.returncode == 0, report.stderr
    assert json.loads(report.stdout)["agreement"]["n"] == 80
    judges = run("judges", db, "--annotator", "bob", "--format", "json", "--bootstrap", "50")
    assert judges.returncode == 0, judges.stderr
    info = run("info", db)
    assert info.returncode == 0 and "bob" in info.stdout, info.stderr
    export = run("export", db, "--format", "jsonl")
    assert export.returncode == 0 and len(export.stdout.splitlines()) == 16, export.stderr
    assert listing(folder) == before  # not a -wal, not a -shm


@pytest.mark.parametrize("args", [
    ("import", "{samples}/banking.jsonl", "--session", "{folder}/new.db"),
    ("annotate", "{folder}/team.db", "--annotator", "carol"),
    ("judge", "{folder}/team.db", "--model", "m", "--base-url", "http://127.0.0.1:9/v1"),
    ("split", "{folder}/team.db", "--seed", "1"),
])
def test_a_command_that_writes_says_the_place_is_read_only(folder: Path,
                                                          args: tuple[str, ...]) -> None:
    before = listing(folder)
    samples = Path(__file__).resolve().parent.parent / "sample_sessions"
    done = run(*(a.format(folder=folder, samples=samples) for a in args))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "read-only" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert listing(folder) == before
