"""Session files written by older schemas, for the migration tests (tests/test_migrations.py).

Each file under tests/fixtures/ is what the schema before one migration wrote: migrations
applied up to (not including) that migration, then rows inserted with plain SQL using only
the columns the first schema has, as that release's code wrote them. The files are committed;
a new migration mNNN commits its own (``python -m tests.session_fixtures``) so it is tested
on a file the release before it wrote.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from annotator.store.migrations import migrations
from annotator.verdict import stored

FIXTURES = Path(__file__).resolve().parent / "fixtures"
STAMP = "2026-01-15T09:30:00+00:00"

GOLDENS: list[dict[str, Any]] = [
    {"id": "savings-min-balance", "user_input": "What is the minimum balance?",
     "reference": "₹10,000 in urban branches.", "response": None,
     "metadata": {"retriever": "bm25"},
     "chunks": ["Minimum balance is ₹10,000.", "KYC every 8 years.", "Rural ₹2,500."],
     "judge": [(1, "States it."), (0, "Off topic."), (1, "Rural figure.")],
     "alice": [1, 0, 0], "notes": [None, None, "only rural [b]branches[/b] 🏦"]},
    {"id": "neft-timings", "user_input": "When does NEFT run?", "reference": "Round the clock.",
     "response": "All day.", "metadata": {},
     "chunks": ["NEFT runs 24x7.", "עברית text", "[/]"],
     "judge": [(1, "Says 24x7."), None, (0, "Markup-like noise.")],
     "alice": [1, None, 0], "notes": [None, None, None]},
]
"""What every fixture holds; the tests read it back through the current Session."""


def write_fixture(path: Path, stop_before: str) -> None:
    """A session file as the schema before ``stop_before`` wrote it."""
    path.unlink(missing_ok=True)
    conn = sqlite3.connect(path)
    db = Database(conn)
    migrations.apply(db, stop_before=stop_before)
    conn.execute("UPDATE settings SET value = 'fixture-session-0001' WHERE key = 'session_id'")
    conn.execute("INSERT INTO judges(name, model, base_url, prompt_id, prompt_sha256, "
                 "parameters, created_at) VALUES ('old-judge', 'gpt-4o-mini', NULL, 'builtin', "
                 "'abc123', ?, ?)", [json.dumps({"max_tokens": 512, "temperature": 0.0}), STAMP])
    flags = "answer" not in {c[1] for c in conn.execute("PRAGMA table_info(labels)")}
    answer_column = "verdict" if flags else "answer"
    chunk_id = 0
    for position, golden in enumerate(GOLDENS, 1):
        conn.execute("INSERT INTO goldens(id, position, user_input, reference, response, "
                     "metadata, content_sha256, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                     [golden["id"], position, golden["user_input"], golden["reference"],
                      golden["response"], json.dumps(golden["metadata"], ensure_ascii=False),
                      f"sha-{position}", STAMP])
        for rank, text in enumerate(golden["chunks"], 1):
            chunk_id += 1
            conn.execute("INSERT INTO chunks(id, golden_id, rank, text) VALUES (?, ?, ?, ?)",
                         [chunk_id, golden["id"], rank, text])
            said = golden["judge"][rank - 1]
            if said is not None:
                conn.execute("INSERT INTO verdicts(judge, chunk_id, verdict, reason, "
                             "created_at) VALUES ('old-judge', ?, ?, ?, ?)",
                             [chunk_id, said[0], said[1], STAMP])
            label, note = golden["alice"][rank - 1], golden["notes"][rank - 1]
            if label is not None or note is not None:
                # Before m010 a label's answer was its verdict; from m010 its kind's word.
                answer = label if flags else stored(label)
                conn.execute(f"INSERT INTO labels(annotator, chunk_id, {answer_column}, judge, "
                             "action, note, created_at, updated_at) VALUES ('alice', ?, ?, "
                             "'old-judge', ?, ?, ?, ?)",
                             [chunk_id, answer, None if label is None else "set", note, STAMP,
                              STAMP])
                if label is not None:
                    conn.execute("INSERT INTO events(at, annotator, kind, chunk_id, golden_id, "
                                 "payload) VALUES (?, 'alice', 'decide', ?, ?, ?)",
                                 [STAMP, chunk_id, golden["id"],
                                  json.dumps({"before": None, "after": {"verdict": label}})])
    if stop_before == "m010_answer_kinds":
        _answers_as_flags(conn)
    conn.commit()
    conn.execute("PRAGMA journal_mode = DELETE")  # one self-contained file to commit
    conn.close()


FLAGGED: dict[str, Any] = {"bob": [1, "unsure", None], "bob-notes": [None, "which branch?", None],
           "conflicts": [(1, 0, "2026-01-14T09:00:00+00:00"), (2, 1, "2026-01-14T10:00:00+00:00")],
           "checks": [(1, 1, 1, 0), (2, 0, None, 1), (3, None, 0, 0)]}
"""What a file holds where an answer was a verdict and an "unsure" flag (before m010): bob's
labels and notes on the first golden, alice's older versions of two chunks (chunk id, verdict,
time) kept apart by a merge, and carol's answers on a check (rank, truth, answer, unsure)."""


def _answers_as_flags(conn: sqlite3.Connection) -> None:
    """Bob's unsure label, a merge's conflicts and a check's answers, as flags stored them."""
    for rank, (label, note) in enumerate(zip(FLAGGED["bob"], FLAGGED["bob-notes"],
                                             strict=True), 1):
        if label is None and note is None:
            continue
        unsure = label == "unsure"
        conn.execute("INSERT INTO labels(annotator, chunk_id, verdict, unsure, action, note, "
                     "created_at, updated_at) VALUES ('bob', ?, ?, ?, ?, ?, ?, ?)",
                     [rank, None if unsure else label, int(unsure),
                      None if unsure or label is None else "set", note, STAMP, STAMP])
    for chunk_id, verdict, at in FLAGGED["conflicts"]:
        conn.execute("INSERT INTO label_conflicts(annotator, chunk_id, verdict, unsure, note, "
                     "updated_at) VALUES ('alice', ?, ?, 0, NULL, ?)", [chunk_id, verdict, at])
    golden = GOLDENS[0]
    record = {"user_input": golden["user_input"], "reference": golden["reference"],
              "response": golden["response"], "metadata": golden["metadata"],
              "chunks": golden["chunks"], "verdicts": {}, "truth": [1, 0, None]}
    conn.execute("INSERT INTO checks(id, source, golden_id, record, created_at) "
                 "VALUES (1, 'gold', ?, ?, ?)", [golden["id"], json.dumps(record), STAMP])
    for rank, truth, answer, unsure in FLAGGED["checks"]:
        conn.execute("INSERT INTO check_answers(annotator, check_id, rank, truth, answer, unsure, "
                     "note, answered_at) VALUES ('carol', 1, ?, ?, ?, ?, ?, ?)",
                     [rank, truth, answer, unsure, "can't tell" if unsure else None, STAMP])


def fixture_path(migration: str) -> Path:
    """Where the file written by the schema before ``migration`` lives."""
    return FIXTURES / f"session-before-{migration}.db"


def main() -> None:
    """Write a fixture for every migration after the first (existing ones are left alone)."""
    names = [m.name for m in migrations._migrations]
    for name in names[1:]:
        if not fixture_path(name).exists():
            write_fixture(fixture_path(name), name)
            print(f"wrote {fixture_path(name)}")


if __name__ == "__main__":
    main()
