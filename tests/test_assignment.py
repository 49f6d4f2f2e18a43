"""Assignment (--per-golden K, --lease-minutes): each golden goes to at most K people, each
claim a lease that lapses when its screen dies, exact however many processes share the file;
the obvious recipe, run beside it as a control, over-assigns."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from annotator.formats import read_goldens
from annotator.people.assignment import NothingLeft, Quota
from annotator.people.review import Review
from annotator.people.team import team_progress
from annotator.store.session import Session
from tests.conftest import ROOT, banking_file, write_lines
from tests.waiting import PATIENCE, wait_until

FIRST, SECOND = "savings-min-balance", "fd-premature-withdrawal"


@pytest.fixture
def db(place: str | Path) -> str | Path:
    """The banking sample, nobody's labels, on each store."""
    return banking_file(place, people=())


def test_a_golden_goes_to_at_most_k_people_and_a_completed_one_stays_theirs(db: str | Path) -> None:
    one = Quota(1, 600)
    with Session(db) as a, Session(db) as b, Session(db) as c:
        alice = Review(a, "alice", "sample-judge", quota=one)
        bob = Review(b, "bob", "sample-judge", quota=one)
        assert (alice.golden.id, bob.golden.id) == (FIRST, SECOND)  # held: passed over
        for _ in alice.golden.chunks:
            assert alice.accept().ok
        third = alice.golden.id
        assert third not in (FIRST, SECOND)  # on to the next one nobody holds
        refused = bob.go_to(FIRST)  # alice completed it: hers for good
        assert not refused.ok and "already has its 1 person" in refused.message
        assert bob.golden.id == SECOND
        assert bob.previous_golden().ok and bob.golden.id != FIRST  # [ passes it over too
        by_golden, by_person = a.claim_counts()
        assert by_golden[FIRST] == (1, 0) and by_person["alice"] == (1, 1)
        # Two per golden: carol may share the one alice completed.
        carol = Review(c, "carol", "sample-judge", quota=Quota(2, 600))
        assert carol.golden.id == FIRST


def test_leaving_returns_the_unfinished_golden_and_keeps_the_labels(db: str | Path) -> None:
    one = Quota(1, 600)
    with Session(db) as a, Session(db) as b:
        alice = Review(a, "alice", "sample-judge", quota=one)
        alice.accept()
        alice.flip()
        alice.leave()
        bob = Review(b, "bob", "sample-judge", quota=one)
        assert bob.golden.id == FIRST
        assert len(b.labels("alice")) == 2  # every decision stays


def test_a_lapsed_lease_lets_another_take_the_golden_and_refuses_a_late_decision(db: str | Path
                                                                                 ) -> None:
    with Session(db) as a, Session(db) as b:
        alice = Review(a, "alice", "sample-judge", quota=Quota(1, 0.0))  # lapses at once
        bob = Review(b, "bob", "sample-judge", quota=Quota(1, 600))
        assert (alice.golden.id, bob.golden.id) == (FIRST, FIRST)
        late = alice.accept()
        assert not late.ok and "lapsed" in late.message and "press ]" in late.message
        assert a.labels("alice") == {}  # nothing written
        renewed = alice.renew()
        assert renewed is not None and not renewed.ok
        assert alice.take_next().ok and alice.golden.id == SECOND


def test_a_person_who_can_take_nothing_is_told_why(tmp_path: Path, place: str | Path) -> None:
    source = write_lines(tmp_path / "two.jsonl", [
        {"id": f"g{i}", "user_input": "q", "reference": "r", "retrieved_contexts": ["a", "b"]}
        for i in range(2)])
    with Session(place) as s:
        s.import_goldens(read_goldens(source), path=str(source))
    with Session(place) as a, Session(place) as b, Session(place) as c:
        Review(a, "alice", None, quota=Quota(1, 600))
        Review(b, "bob", None, quota=Quota(1, 600))
        with pytest.raises(NothingLeft, match=r"Every one of the 2 goldens .* has its 1 person"):
            Review(c, "carol", None, quota=Quota(1, 600))


def test_the_dashboard_shows_each_persons_and_each_goldens_claims(db: str | Path) -> None:
    with Session(db) as a, Session(db) as b:
        alice = Review(a, "alice", "sample-judge", quota=Quota(2, 600))
        for _ in alice.golden.chunks:
            alice.accept()
        Review(b, "bob", "sample-judge", quota=Quota(2, 600))
        progress = team_progress(a)
    people = {row["name"]: row for row in progress.people}
    assert people["alice"]["claims"] == "1 done, 1 open"
    assert progress.claims[0] == {"golden": FIRST, "done": "1", "open": "1"}


def _big_session(place: str | Path, folder: Path, goldens: int = 300, chunks: int = 5
                 ) -> str | Path:
    source = write_lines(folder / "goldens.jsonl", [
        {"id": f"g{i:03d}", "user_input": f"question {i}", "reference": "r",
         "retrieved_contexts": [f"chunk {i}-{k}" for k in range(chunks)]}
        for i in range(goldens)])
    with Session(place) as session:
        session.import_goldens(read_goldens(source), path=str(source))
    return place


def _workers(db: str | Path, mode: str, log: Path, names: list[str], lease_s: float
             ) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "tests.team_workers", str(db), mode, str(log),
                             "2", str(lease_s), *names], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
    """Kill whatever is left of the workers (a failed test leaves none running)."""
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _completed_by(db: str | Path) -> Counter[str]:
    """Per golden, how many people answered every one of its chunks."""
    with Session(db, create=False) as session:
        rows = session.conn.execute(
            """SELECT c.golden_id FROM labels l JOIN chunks c ON c.id = l.chunk_id
               WHERE l.answer IS NOT NULL GROUP BY c.golden_id, l.annotator
               HAVING count(*) = (SELECT count(*) FROM chunks x WHERE x.golden_id = c.golden_id)
            """).fetchall()
    return Counter(golden_id for (golden_id,) in rows)


def _open_claims(db: str | Path, names: list[str]) -> set[tuple[str, str]]:
    """(golden, person) of the goldens these people hold and have not finished."""
    with Session(db, create=False) as session:
        return {(g, a) for g, a in session.conn.execute(
            f"SELECT golden_id, annotator FROM claims WHERE done_at IS NULL AND annotator IN "
            f"({','.join('?' * len(names))})", names)}


def _decisions(db: str | Path, names: list[str]) -> int:
    with Session(db, create=False) as session:
        return int(session.conn.execute(
            f"SELECT count(*) FROM labels WHERE annotator IN ({','.join('?' * len(names))})",
            names).fetchone()[0])


def test_fifty_people_on_three_processes_fill_every_golden_exactly_and_a_killed_one_loses_nothing(
        tmp_path: Path, place: str | Path) -> None:
    db = _big_session(place, tmp_path)
    people = [f"p{i:02d}" for i in range(50)]
    groups = [people[0:17], people[17:34], people[34:]]
    logs = [tmp_path / f"said-{i}.jsonl" for i in range(3)]
    procs = [_workers(db, "exact", log, group, lease_s=1.0)
             for log, group in zip(logs, groups, strict=True)]
    try:
        # Kill the first process mid-run, once its people have decided a good share, while
        # they hold goldens they have not finished.
        wait_until(lambda: _decisions(db, groups[0]) >= 200 and _open_claims(db, groups[0]),
                   "the first process's 200th decision")
        procs[0].send_signal(signal.SIGKILL)
        procs[0].wait()
        orphans = _open_claims(db, groups[0])
        for proc in procs[1:]:
            _, err = proc.communicate(timeout=PATIENCE)
            assert proc.returncode == 0, err.decode()[-3000:]
    finally:
        _stop(procs)

    with Session(db) as session:
        by_golden, _ = session.claim_counts()
    assert len(by_golden) == 300
    assert all(done == 2 for done, _ in by_golden.values())  # exactly K, none over
    assert sum(done for done, _ in by_golden.values()) == 600
    completed = _completed_by(db)
    assert max(completed.values()) == 2 and len(completed) == 300
    # What the killed process held went back to the pool, and others finished it.
    assert orphans
    with Session(db, create=False) as session:
        for golden_id, holder in orphans:
            finishers = {a for (a,) in session.conn.execute(
                "SELECT annotator FROM claims WHERE golden_id = ? AND done_at IS NOT NULL",
                [golden_id])}
            assert len(finishers) == 2 and holder not in finishers, golden_id
        # Every decision a person was told was done is stored, the killed process's too.
        stored = {(a, c): v for a, c, v in session.conn.execute(
            "SELECT annotator, chunk_id, verdict FROM labels")}
    said = [json.loads(line) for log in logs if log.exists()
            for line in log.read_text().splitlines()]
    assert any(s["annotator"] in groups[0] for s in said)
    lost = [s for s in said if stored.get((s["annotator"], s["chunk_id"])) != s["answer"]]
    assert lost == []


def test_the_obvious_recipe_over_assigns(tmp_path: Path, place: str | Path) -> None:
    """The control: count in one transaction, take in another. It must over-assign here, or the
    test above could not fail."""
    db = _big_session(place, tmp_path, goldens=60)
    people = [f"p{i:02d}" for i in range(30)]
    procs = [_workers(db, "naive", tmp_path / f"said-{i}.jsonl", people[i::3], lease_s=60)
             for i in range(3)]
    try:
        for proc in procs:
            _, err = proc.communicate(timeout=PATIENCE)
            assert proc.returncode == 0, err.decode()[-3000:]
    finally:
        _stop(procs)
    over = [g for g, n in _completed_by(db).items() if n > 2]
    assert over, "the naive recipe never over-assigned: the race did not happen"


def test_goldens_completed_before_the_quota_count_toward_it(tmp_path: Path) -> None:
    from tests.test_gate import _serve

    db = banking_file(tmp_path / "team.db", people=("sample-reviewer", "second-reviewer"))
    assert "is in use" in _serve(db, "--per-golden", "2")  # serve counts them in, then stops
    with Session(db) as session:
        by_golden, by_person = session.claim_counts()
        assert len(by_golden) == 16 and set(by_golden.values()) == {(2, 0)}
        assert by_person["sample-reviewer"] == (16, 0)
        assert session.claim_completed() == 0  # once: counting again adds nothing
        with pytest.raises(NothingLeft):
            Review(session, "newcomer", "sample-judge", quota=Quota(2, 600))
        assert Review(session, "newcomer", "sample-judge", quota=Quota(3, 600)).golden.id == FIRST
