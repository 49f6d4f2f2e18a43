"""Nothing the screen showed as decided is lost: kill -9 mid-session, two people at once."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from annotator.store.session import Session
from tests.conftest import BANKING, ROOT, banking_file
from tests.terminal import Terminal


def _imported(tmp_path: Path) -> Path:
    return banking_file(tmp_path / "banking.db")


def shown_decided(term: Terminal) -> int:
    """The highest 'chunks N/80' the header has shown."""
    return max(int(n) for n in re.findall(rb"chunks (\d+)/80", term.seen))


def test_kill_9_loses_nothing_the_screen_showed(place: str | Path) -> None:
    db = banking_file(place)  # each store: what the screen showed is stored
    term = Terminal(["annotate", str(db), "--annotator", "alice"])
    try:
        term.wait_for(rb"chunks 0/80")
        keys = "afaaa" "aafaff" "a"  # 12 decisions across three goldens
        for count, key in enumerate(keys, 1):
            term.press(key)
            term.wait_for(rb"chunks %d/80" % count)
        for key in "0101":  # and four more, killed without waiting to see them
            term.press(key)
        term.read(0.02)
        shown = shown_decided(term)
        term.process.send_signal(signal.SIGKILL)
        term.process.wait(timeout=10)
    finally:
        if term.process.poll() is None:
            term.process.kill()
        os.close(term.master)
    assert shown >= 12
    with Session(db) as session:
        labels = {c: lab for c, lab in session.labels("alice").items() if lab.verdict is not None}
        assert len(labels) >= shown  # everything shown as decided is on disk
        assert len(labels) <= 16
        first = session.golden("savings-min-balance")
        assert [labels[c.id].verdict for c in first.chunks] == [1, 1, 0, 1, 1]
        decided_events = [e for e in session.events("alice") if e["kind"] == "decide"]
        assert len(decided_events) == len(labels)  # every label has its event, and no more


WRITER = textwrap.dedent("""
    import sys
    from annotator.people.review import Review
    from annotator.store.session import Session

    db, annotator, verdict = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with Session(db, create=False) as session:
        review = Review(session, annotator, "sample-judge")
        for _ in range(review.total_chunks):
            outcome = review.set(verdict)
            assert outcome.ok, outcome.message
        print(review.chunks_decided)
""")


def test_two_annotators_write_one_file_from_two_processes(tmp_path: Path) -> None:
    db = _imported(tmp_path)
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    runs = [subprocess.Popen([sys.executable, str(script), str(db), name, verdict],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
            for name, verdict in (("alice", "1"), ("bob", "0"))]
    for run in runs:
        out, err = run.communicate(timeout=120)
        assert run.returncode == 0, err
        assert out.strip() == "80"
    with Session(db) as session:
        alice, bob = session.labels("alice"), session.labels("bob")
        assert len(alice) == len(bob) == 80
        assert {label.verdict for label in alice.values()} == {1}  # nothing mixed
        assert {label.verdict for label in bob.values()} == {0}
        for name in ("alice", "bob"):
            events = [e for e in session.events(name) if e["kind"] == "decide"]
            assert len(events) == 80


def test_opening_a_goldens_file_imports_it_once_then_continues(tmp_path: Path) -> None:
    source = tmp_path / "banking.jsonl"
    source.write_bytes(BANKING.read_bytes())
    for round_ in (1, 2):
        term = Terminal(["annotate", str(source), "--annotator", "alice"])
        try:
            term.wait_for(rb"goldens complete")
            if round_ == 1:
                assert b"Imported 16 goldens" in term.seen and b"banking.db" in term.seen
                term.press("a")
                term.wait_for(rb"chunks 1/80")
            else:
                assert b"Imported" not in term.seen and b"chunks 1/80" in term.seen
            term.press("q")
            term.read(2.0)
            assert term.process.wait(timeout=20) == 0
            assert b"every decision is in" in term.seen
        finally:
            if term.process.poll() is None:
                term.process.kill()
            os.close(term.master)
    with Session(tmp_path / "banking.db") as session:
        assert session.count_goldens() == 16 and len(session.labels("alice")) == 1


def test_copy_takes_what_is_still_in_the_log_while_the_session_is_open(tmp_path: Path) -> None:
    import shutil

    from click.testing import CliRunner

    from annotator.cli import cli

    db = _imported(tmp_path)
    with Session(db) as writer:  # open, as a running judge or screen would be
        writer.db.execute("PRAGMA wal_autocheckpoint = 0")  # keep every write in the -wal
        for chunk_id in list(writer.labels("sample-reviewer"))[:10]:
            writer.decide("alice", chunk_id, 1, "set")
        shutil.copy(db, tmp_path / "plain.db")  # what `cp` takes: the main file only
        result = CliRunner().invoke(cli, ["copy", str(db), str(tmp_path / "copy.db")])
        assert result.exit_code == 0, result.output
        assert "Copied" in result.stdout and "16 goldens, 80 chunks" in result.stdout
        again = CliRunner().invoke(cli, ["copy", str(db), str(tmp_path / "copy.db")])
        assert again.exit_code == 2 and "already exists" in again.stderr
    with Session(tmp_path / "copy.db") as copy:
        assert len(copy.labels("alice")) == 10
    import sqlite3

    plain = sqlite3.connect(tmp_path / "plain.db")
    try:
        missing = plain.execute("SELECT count(*) FROM labels WHERE annotator = 'alice'").fetchone()
    finally:
        plain.close()
    assert missing[0] < 10  # the plain copy lost decisions that were still in the log
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.endswith(".partial")]
    assert leftovers == []


def test_closing_after_writes_folds_the_log_into_the_file(tmp_path: Path) -> None:
    db = _imported(tmp_path)
    with Session(db) as writer:
        writer.db.execute("PRAGMA wal_autocheckpoint = 0")
        chunk_id = next(iter(writer.labels("sample-reviewer")))
        writer.decide("alice", chunk_id, 0, "set")
    wal = Path(f"{db}-wal")
    assert not wal.exists() or wal.stat().st_size == 0


def test_an_output_file_never_follows_a_planted_partial_symlink(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from annotator.cli import cli

    db = _imported(tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me", encoding="utf-8")
    out = tmp_path / "report.json"
    Path(f"{out}.partial").symlink_to(victim)
    result = CliRunner().invoke(cli, ["report", str(db), "--format", "json", "--bootstrap", "0",
                                      "--output", str(out)])
    assert result.exit_code == 0, result.output
    assert victim.read_text(encoding="utf-8") == "keep me"
    assert out.read_text(encoding="utf-8").startswith("{")
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask  # a new file's mode, not mkstemp's 0600
