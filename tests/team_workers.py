"""Simulated annotators for the assignment tests (tests/test_assignment.py): one process, as one
`serve` process is, running several people at once, each in a thread of its own with its own
connection, labelling until every golden has its K people.

``exact``: each person labels through Review with a quota, the path every screen takes.
``naive``: the obvious recipe a control: count the claims in one transaction, take the golden in
another, so two people can both see a free place.

Each decision a person was told is done is appended to ``LOG`` (one JSON line, after the call
returned), so a test can check that none is lost when the process is killed.

    python -m tests.team_workers SESSION exact|naive LOG K LEASE_S NAME...
"""

from __future__ import annotations

import json
import os
import random
import sys
import threading
import time
from pathlib import Path

from annotator.people.assignment import NothingLeft, Quota
from annotator.people.review import Review
from annotator.store.session import Session

POLL_S = 0.02
"""How often a person with nothing to take looks again (leases lapse; others finish)."""


def goldens_done(session: Session, per_golden: int) -> bool:
    """Whether every golden has its ``per_golden`` completed claims."""
    per_golden_counts, _ = session.claim_counts()
    return len(per_golden_counts) == session.count_goldens() and all(
        done >= per_golden for done, _ in per_golden_counts.values())


class Log:
    """The decisions people were told are done, one JSON line each, flushed at once."""

    def __init__(self, path: Path) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self.lock = threading.Lock()

    def said_done(self, annotator: str, chunk_id: int, answer: int) -> None:
        line = json.dumps({"annotator": annotator, "chunk_id": chunk_id, "answer": answer})
        with self.lock:
            os.write(self.fd, (line + "\n").encode())


def exact(path: str, name: str, quota: Quota, log: Log) -> None:
    """One person on the annotation screen's path: Review with a quota."""
    rng = random.Random(name)
    with Session(path, busy_timeout=60) as session:
        review: Review | None = None
        while review is None:
            try:
                review = Review(session, name, None, quota=quota)
            except NothingLeft:
                if goldens_done(session, quota.per_golden):
                    return
                time.sleep(POLL_S)
        while True:
            if review.is_complete(review.golden.id):
                if not review.take_next().ok:
                    if goldens_done(session, quota.per_golden):
                        return
                    time.sleep(POLL_S)
                continue
            chunk_id = review.selected.chunk.id
            answer = rng.randint(0, 1)
            if review.set(answer).ok:
                log.said_done(name, chunk_id, answer)
            elif not review.take_next().ok:  # lapsed, and others filled it: wait for a place
                if goldens_done(session, quota.per_golden):
                    return
                time.sleep(POLL_S)


def naive(path: str, name: str, quota: Quota, log: Log) -> None:
    """One person claiming by the obvious recipe: count, then take, in two transactions."""
    rng = random.Random(name)
    with Session(path, busy_timeout=60) as session:
        chunks = session.chunk_ids()
        for golden_id in session.golden_ids():
            held = session.conn.execute(
                "SELECT count(*) FROM claims WHERE golden_id = ? AND annotator != ?",
                (golden_id, name)).fetchone()[0]
            if held >= quota.per_golden:
                continue
            with session.transaction():
                session.conn.execute(
                    "INSERT INTO claims(golden_id, annotator, claimed_at, expires_at, done_at) "
                    "VALUES (?, ?, 'now', 'later', NULL) ON CONFLICT(golden_id, annotator) DO "
                    "UPDATE SET expires_at = 'later', done_at = NULL", (golden_id, name))
            for chunk_id in chunks[golden_id]:
                answer = rng.randint(0, 1)
                session.decide(name, chunk_id, answer, "set")
                log.said_done(name, chunk_id, answer)
            with session.transaction():
                session.conn.execute("UPDATE claims SET done_at = 'done', expires_at = NULL "
                                     "WHERE golden_id = ? AND annotator = ?", (golden_id, name))


def main() -> None:
    path, mode, log_path, per_golden, lease_s, *names = sys.argv[1:]
    quota = Quota(int(per_golden), float(lease_s))
    log = Log(Path(log_path))
    person = {"exact": exact, "naive": naive}[mode]
    threads = [threading.Thread(target=person, args=(path, name, quota, log)) for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


if __name__ == "__main__":
    main()
