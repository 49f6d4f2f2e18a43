"""The session file's schema, as append-only migrations: add m002_..., never edit one that shipped.

Inspect a file with ``sqlite-utils migrate SESSION.db annotator/store/migrations.py --list``.
"""

from __future__ import annotations

import sys
import uuid
from typing import Any

from annotator.store.versions import MIGRATION_SET

# sqlite-utils imports pandas and numpy when they are installed, to insert their values, which
# the migrations never do: a third of a second on every new session file. They are kept out of
# that one import (None in sys.modules makes an import fail as if the module were absent) and
# import as usual afterwards.
_HELD_OFF = [name for name in ("pandas", "numpy") if name not in sys.modules]
for _name in _HELD_OFF:
    sys.modules[_name] = None  # type: ignore[assignment]
try:
    from sqlite_utils import Database, Migrations
finally:
    for _name in _HELD_OFF:
        del sys.modules[_name]

migrations = Migrations(MIGRATION_SET)


@migrations()
def m001_initial(db: Database) -> None:
    """Goldens, chunks, judges, verdicts, labels, the event log and session settings."""
    # Plain DDL rather than Table.create: CHECK constraints keep a verdict of 2 out for good.
    db.execute(
        """
        CREATE TABLE settings (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL
        )"""
    )
    db.execute(
        """
        CREATE TABLE goldens (
            id TEXT PRIMARY KEY,
            position INTEGER NOT NULL,
            user_input TEXT NOT NULL,
            reference TEXT,
            response TEXT,
            metadata TEXT NOT NULL DEFAULT '{}',
            content_sha256 TEXT NOT NULL,
            created_at TEXT NOT NULL
        )"""
    )
    db.execute("CREATE INDEX goldens_position ON goldens(position)")
    db.execute(
        """
        CREATE TABLE chunks (
            id INTEGER PRIMARY KEY,
            golden_id TEXT NOT NULL REFERENCES goldens(id) ON DELETE CASCADE,
            rank INTEGER NOT NULL CHECK (rank >= 1),
            text TEXT NOT NULL,
            UNIQUE (golden_id, rank)
        )"""
    )
    db.execute(
        """
        CREATE TABLE judges (
            name TEXT PRIMARY KEY,
            model TEXT,
            base_url TEXT,
            prompt_id TEXT NOT NULL,
            prompt_sha256 TEXT,
            parameters TEXT NOT NULL DEFAULT '{}',
            created_at TEXT NOT NULL
        )"""
    )
    db.execute(
        """
        CREATE TABLE verdicts (
            id INTEGER PRIMARY KEY,
            judge TEXT NOT NULL REFERENCES judges(name),
            chunk_id INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
            verdict INTEGER CHECK (verdict IN (0, 1)),
            reason TEXT,
            p_relevant REAL CHECK (p_relevant BETWEEN 0 AND 1),
            error TEXT,
            raw_reply TEXT,
            tokens_in INTEGER,
            tokens_out INTEGER,
            latency_ms REAL,
            request_sha256 TEXT,
            created_at TEXT NOT NULL,
            CHECK ((verdict IS NULL) <> (error IS NULL))
        )"""
    )
    db.execute("CREATE INDEX verdicts_judge_chunk ON verdicts(judge, chunk_id)")
    db.execute("CREATE INDEX verdicts_request ON verdicts(request_sha256)")
    db.execute(
        """
        CREATE TABLE labels (
            id INTEGER PRIMARY KEY,
            annotator TEXT NOT NULL,
            chunk_id INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
            verdict INTEGER CHECK (verdict IN (0, 1)),
            blind_verdict INTEGER CHECK (blind_verdict IN (0, 1)),
            shown_verdict INTEGER CHECK (shown_verdict IN (0, 1)),
            judge TEXT,
            action TEXT CHECK (action IN ('accept', 'flip', 'set', 'import')),
            note TEXT,
            decision_ms REAL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            UNIQUE (annotator, chunk_id)
        )"""
    )
    db.execute("CREATE INDEX labels_chunk ON labels(chunk_id)")
    db.execute(
        """
        CREATE TABLE events (
            id INTEGER PRIMARY KEY,
            at TEXT NOT NULL,
            annotator TEXT,
            kind TEXT NOT NULL,
            chunk_id INTEGER,
            golden_id TEXT,
            payload TEXT NOT NULL DEFAULT '{}',
            undoes INTEGER REFERENCES events(id)
        )"""
    )
    db.execute("CREATE INDEX events_annotator ON events(annotator, kind, id)")
    db.execute("CREATE UNIQUE INDEX events_undoes ON events(undoes)")
    # The session's own identity seeds anything reproducible per session (blind sampling).
    db.execute("INSERT INTO settings(key, value) VALUES ('session_id', ?)", [uuid.uuid4().hex])


@migrations()
def m002_calibration(db: Database) -> None:
    """Dev/test splits, adjudicated gold labels, labels kept aside by a merge, judge repetitions."""
    db.execute(
        """
        CREATE TABLE splits (
            golden_id TEXT PRIMARY KEY REFERENCES goldens(id) ON DELETE CASCADE,
            split TEXT NOT NULL CHECK (split IN ('dev', 'test')),
            seed INTEGER,
            created_at TEXT NOT NULL
        )"""
    )
    db.execute(
        """
        CREATE TABLE gold_labels (
            chunk_id INTEGER PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
            verdict INTEGER NOT NULL CHECK (verdict IN (0, 1)),
            decided_by TEXT NOT NULL,
            note TEXT,
            decided_at TEXT NOT NULL
        )"""
    )
    # A merge keeps every version of a label one person gave differently in two files: the
    # newest stays in force in labels, and each version is kept here to be reported.
    db.execute(
        """
        CREATE TABLE label_conflicts (
            id INTEGER PRIMARY KEY,
            annotator TEXT NOT NULL,
            chunk_id INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
            verdict INTEGER CHECK (verdict IN (0, 1)),
            note TEXT,
            updated_at TEXT NOT NULL
        )"""
    )
    db.execute("CREATE INDEX label_conflicts_chunk ON label_conflicts(chunk_id)")
    # Repetition 1 is the judge's verdict in force; 2..K measure how stable it is.
    db.execute("ALTER TABLE verdicts ADD COLUMN repetition INTEGER NOT NULL DEFAULT 1 "
               "CHECK (repetition >= 1)")


@migrations()
def m003_call_details(db: Database) -> None:
    """Per call: why a verdict carries no P(relevant) although logprobs were asked for, and how
    many HTTP requests it sent (a library may retry inside one call)."""
    db.execute("ALTER TABLE verdicts ADD COLUMN confidence_note TEXT")
    db.execute("ALTER TABLE verdicts ADD COLUMN requests INTEGER")


@migrations()
def m004_judge_designs(db: Database) -> None:
    """Prompt files, graded replies, listwise windows, cached tokens and the examples a judge
    learned from (which it is never scored on)."""
    db.execute("ALTER TABLE judges ADD COLUMN prompt_text TEXT")
    db.execute("ALTER TABLE verdicts ADD COLUMN grade INTEGER")
    db.execute("ALTER TABLE verdicts ADD COLUMN tokens_cached INTEGER")
    # Listwise: 1 where overlapping windows gave the chunk different verdicts.
    db.execute("ALTER TABLE verdicts ADD COLUMN unstable INTEGER CHECK (unstable IN (0, 1))")
    # A chunk is named by (golden id, rank), as across a merge, not by this file's chunk id.
    db.execute(
        """
        CREATE TABLE judge_examples (
            judge TEXT NOT NULL REFERENCES judges(name) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            golden_id TEXT NOT NULL,
            rank INTEGER NOT NULL,
            verdict INTEGER NOT NULL CHECK (verdict IN (0, 1)),
            PRIMARY KEY (judge, position)
        )"""
    )


@migrations()
def m005_batches(db: Database) -> None:
    """Batch judging: each batch a provider runs (or a request file written for an offline
    engine), and each request in it, until its result is stored exactly once."""
    db.execute(
        """
        CREATE TABLE batches (
            id TEXT PRIMARY KEY,
            judge TEXT NOT NULL REFERENCES judges(name) ON DELETE CASCADE,
            round INTEGER NOT NULL,
            part INTEGER NOT NULL,
            input_file_id TEXT,
            output_file_id TEXT,
            error_file_id TEXT,
            state TEXT NOT NULL,
            requests INTEGER NOT NULL,
            completed INTEGER NOT NULL DEFAULT 0,
            failed INTEGER NOT NULL DEFAULT 0,
            collected INTEGER NOT NULL DEFAULT 0 CHECK (collected IN (0, 1)),
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        )"""
    )
    # One row per request line: the chunks its result is for, and where that result is.
    db.execute(
        """
        CREATE TABLE batch_requests (
            custom_id TEXT PRIMARY KEY,
            judge TEXT NOT NULL REFERENCES judges(name) ON DELETE CASCADE,
            round INTEGER NOT NULL,
            part INTEGER NOT NULL,
            task TEXT NOT NULL,
            piece INTEGER NOT NULL,
            pieces INTEGER NOT NULL,
            chunk_ids TEXT NOT NULL,
            ranks TEXT,
            repetition INTEGER NOT NULL,
            request_sha256 TEXT NOT NULL,
            logprobs INTEGER NOT NULL,
            state TEXT NOT NULL DEFAULT 'pending'
                CHECK (state IN ('pending', 'answered', 'stored', 'failed')),
            result TEXT
        )"""
    )
    db.execute("CREATE INDEX batch_requests_task ON batch_requests(task)")
    db.execute("ALTER TABLE verdicts ADD COLUMN batch_id TEXT")  # the batch a call came back in
    db.execute("CREATE INDEX batch_requests_part ON batch_requests(judge, round, part)")


@migrations()
def m006_probes(db: Database) -> None:
    """Gullibility probes: synthetic noise chunks made from a golden (never chunks of it, so no
    statistic, export or queue can meet one), and each judge's calls on them."""
    db.execute(
        """
        CREATE TABLE probes (
            id INTEGER PRIMARY KEY,
            golden_id TEXT NOT NULL REFERENCES goldens(id) ON DELETE CASCADE,
            kind TEXT NOT NULL,
            number INTEGER NOT NULL CHECK (number >= 1),
            text TEXT NOT NULL,
            created_at TEXT NOT NULL,
            UNIQUE (golden_id, kind, number)
        )"""
    )
    db.execute(
        """
        CREATE TABLE probe_calls (
            id INTEGER PRIMARY KEY,
            judge TEXT NOT NULL REFERENCES judges(name) ON DELETE CASCADE,
            probe_id INTEGER NOT NULL REFERENCES probes(id) ON DELETE CASCADE,
            verdict INTEGER CHECK (verdict IN (0, 1)),
            reason TEXT,
            p_relevant REAL CHECK (p_relevant BETWEEN 0 AND 1),
            error TEXT,
            raw_reply TEXT,
            tokens_in INTEGER,
            tokens_out INTEGER,
            latency_ms REAL,
            request_sha256 TEXT NOT NULL,
            created_at TEXT NOT NULL,
            CHECK ((verdict IS NULL) <> (error IS NULL))
        )"""
    )
    db.execute("CREATE INDEX probe_calls_judge ON probe_calls(judge, probe_id)")


@migrations()
def m007_unsure_and_reasons(db: Database) -> None:
    """A person's "unsure" (no verdict; a note says why) and "verdict right, reason wrong" on a
    chunk whose verdict they accepted; a merge keeps unsure versions apart from pending ones."""
    for table, column in (("labels", "unsure"), ("labels", "reason_wrong"),
                          ("label_conflicts", "unsure")):
        db.execute(f"ALTER TABLE {table} ADD COLUMN {column} INTEGER NOT NULL DEFAULT 0 "
                   f"CHECK ({column} IN (0, 1))")


@migrations()
def m008_attention_checks(db: Database) -> None:
    """Attention checks: goldens whose truth is settled (adjudicated, or a gold file), shown
    among the others, and each person's answers on them, kept apart from every label."""
    # A check is a snapshot of its golden (content, the judges' verdicts shown, the truth per
    # rank), so later edits to the session or the gold file change no answer's score.
    db.execute(
        """
        CREATE TABLE checks (
            id INTEGER PRIMARY KEY,
            source TEXT NOT NULL,
            golden_id TEXT NOT NULL,
            record TEXT NOT NULL,
            created_at TEXT NOT NULL,
            UNIQUE (source, golden_id)
        )"""
    )
    db.execute(
        """
        CREATE TABLE check_answers (
            id INTEGER PRIMARY KEY,
            annotator TEXT NOT NULL,
            check_id INTEGER NOT NULL REFERENCES checks(id) ON DELETE CASCADE,
            rank INTEGER NOT NULL CHECK (rank >= 1),
            truth INTEGER CHECK (truth IN (0, 1)),
            answer INTEGER CHECK (answer IN (0, 1)),
            unsure INTEGER NOT NULL DEFAULT 0 CHECK (unsure IN (0, 1)),
            shown_verdict INTEGER CHECK (shown_verdict IN (0, 1)),
            note TEXT,
            answered_at TEXT NOT NULL,
            UNIQUE (annotator, check_id, rank)
        )"""
    )


@migrations()
def m009_chunk_ids(db: Database) -> None:
    """Each chunk's own id and retrieval score, as the team's retriever or tracer gave them
    (RAGAS's retrieved_context_ids; None where the file had none): exports name documents by
    them instead of by golden and rank."""
    db.execute("ALTER TABLE chunks ADD COLUMN doc_id TEXT")
    db.execute("ALTER TABLE chunks ADD COLUMN score REAL")


# The stored answer's words and what each counts as, as m010 wrote them. A migration that adds a
# kind writes its own copy: a shipped migration never changes.
_M010_ANSWER = """answer TEXT CHECK (answer IN ('noise', 'useful', 'unsure')),
            verdict INTEGER GENERATED ALWAYS AS
              (CASE answer WHEN 'noise' THEN 0 WHEN 'useful' THEN 1 END) VIRTUAL,
            unsure INTEGER GENERATED ALWAYS AS (answer IS 'unsure') VIRTUAL"""


def _m010_from_flags(verdict: str) -> str:
    """The word for a row of the old table, from its verdict column and its unsure flag."""
    return (f"CASE WHEN unsure = 1 THEN 'unsure' WHEN {verdict} = 1 THEN 'useful' "
            f"WHEN {verdict} = 0 THEN 'noise' END")


@migrations()
def m010_answer_kinds(db: Database) -> None:
    """A person's answer is one checked column holding its kind's word (noise, useful, unsure);
    the verdict and unsure columns are generated from it, so they can never disagree."""
    tables = {
        "labels": ("""annotator TEXT NOT NULL,
            chunk_id INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
            ANSWER,
            blind_verdict INTEGER CHECK (blind_verdict IN (0, 1)),
            shown_verdict INTEGER CHECK (shown_verdict IN (0, 1)),
            judge TEXT,
            action TEXT CHECK (action IN ('accept', 'flip', 'set', 'import')),
            note TEXT,
            decision_ms REAL,
            reason_wrong INTEGER NOT NULL DEFAULT 0 CHECK (reason_wrong IN (0, 1)),
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            UNIQUE (annotator, chunk_id)""",
                   ("annotator", "chunk_id", "blind_verdict", "shown_verdict", "judge",
                    "action", "note", "decision_ms", "reason_wrong", "created_at", "updated_at"),
                   "CREATE INDEX labels_chunk ON labels(chunk_id)"),
        "label_conflicts": ("""annotator TEXT NOT NULL,
            chunk_id INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
            ANSWER,
            note TEXT,
            updated_at TEXT NOT NULL""", ("annotator", "chunk_id", "note", "updated_at"),
                            "CREATE INDEX label_conflicts_chunk ON label_conflicts(chunk_id)"),
        "check_answers": ("""annotator TEXT NOT NULL,
            check_id INTEGER NOT NULL REFERENCES checks(id) ON DELETE CASCADE,
            rank INTEGER NOT NULL CHECK (rank >= 1),
            truth INTEGER CHECK (truth IN (0, 1)),
            ANSWER,
            shown_verdict INTEGER CHECK (shown_verdict IN (0, 1)),
            note TEXT,
            answered_at TEXT NOT NULL,
            UNIQUE (annotator, check_id, rank)""",
                          ("annotator", "check_id", "rank", "truth", "shown_verdict", "note",
                           "answered_at"), None),
    }
    for table, (body, kept, index) in tables.items():
        # check_answers called its verdict "answer".
        flags = _m010_from_flags("answer" if table == "check_answers" else "verdict")
        listed = ", ".join(kept)
        _rebuild(db, table, "m010", body.replace("ANSWER", _M010_ANSWER), f"{listed}, answer",
                 f"{listed}, {flags}", index)


def _rebuild(db: Database, table: str, migration: str, body: str, columns: str, select: str,
             index: str | None) -> None:
    """Rebuild a table with a new body (SQLite cannot change a CHECK or a generated column in
    place): the new table, its rows (``columns`` from ``select`` of the old, ids kept), the old
    dropped, the new renamed, its index made again."""
    db.execute(f"CREATE TABLE {table}_{migration} (\n            id INTEGER PRIMARY KEY,\n"
               f"            {body}\n        )")
    db.execute(f"INSERT INTO {table}_{migration}(id, {columns}) "
               f"SELECT id, {select} FROM {table} ORDER BY id")
    db.execute(f"DROP TABLE {table}")
    db.execute(f"ALTER TABLE {table}_{migration} RENAME TO {table}")
    if index:
        db.execute(index)


@migrations()
def m011_grades(db: Database) -> None:
    """A person's grade on a graded session's scale (TREC's 0-3), beside the answer it reads as
    at the session's threshold; a judge's grade is already kept on its verdicts."""
    db.execute("ALTER TABLE labels ADD COLUMN grade INTEGER CHECK (grade >= 0)")


_M012_ANSWER = """answer TEXT CHECK (answer IN ('noise', 'useful', 'unsure', 'distractor')),
            verdict INTEGER GENERATED ALWAYS AS
              (CASE answer WHEN 'noise' THEN 0 WHEN 'useful' THEN 1 WHEN 'distractor' THEN 0
               END) VIRTUAL,
            unsure INTEGER GENERATED ALWAYS AS (answer IS 'unsure') VIRTUAL,
            distractor INTEGER GENERATED ALWAYS AS (answer IS 'distractor') VIRTUAL"""


_ANSWER_TABLES = {
    "labels": ("""annotator TEXT NOT NULL,
            chunk_id INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
            ANSWER,
            blind_verdict INTEGER CHECK (blind_verdict IN (0, 1)),
            shown_verdict INTEGER CHECK (shown_verdict IN (0, 1)),
            judge TEXT,
            action TEXT CHECK (action IN ('accept', 'flip', 'set', 'import')),
            note TEXT,
            decision_ms REAL,
            reason_wrong INTEGER NOT NULL DEFAULT 0 CHECK (reason_wrong IN (0, 1)),
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            grade INTEGER CHECK (grade >= 0),
            UNIQUE (annotator, chunk_id)""",
               ("annotator", "chunk_id", "answer", "blind_verdict", "shown_verdict", "judge",
                "action", "note", "decision_ms", "reason_wrong", "created_at", "updated_at",
                "grade"),
               "CREATE INDEX labels_chunk ON labels(chunk_id)"),
    "label_conflicts": ("""annotator TEXT NOT NULL,
            chunk_id INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
            ANSWER,
            note TEXT,
            updated_at TEXT NOT NULL""", ("annotator", "chunk_id", "answer", "note", "updated_at"),
                        "CREATE INDEX label_conflicts_chunk ON label_conflicts(chunk_id)"),
    "check_answers": ("""annotator TEXT NOT NULL,
            check_id INTEGER NOT NULL REFERENCES checks(id) ON DELETE CASCADE,
            rank INTEGER NOT NULL CHECK (rank >= 1),
            truth INTEGER CHECK (truth IN (0, 1)),
            ANSWER,
            shown_verdict INTEGER CHECK (shown_verdict IN (0, 1)),
            note TEXT,
            answered_at TEXT NOT NULL,
            UNIQUE (annotator, check_id, rank)""",
                      ("annotator", "check_id", "rank", "truth", "answer", "shown_verdict",
                       "note", "answered_at"), None),
}
"""The three tables holding a person's answer, ANSWER standing for its columns (since m012)."""


_ADDED_LATER = {"labels": (("guideline", "guideline INTEGER CHECK (guideline >= 1)"),)}
"""Columns a migration after m012 added to a table of _ANSWER_TABLES (whose bodies stay as m012
made them): a rebuild keeps each one the table has by then."""


def rebuild_answer_tables(db: Database, migration: str, answer: str) -> None:
    """Rebuild the tables holding a person's answer with ``answer`` as their answer columns: a
    new kind of answer is a migration calling this with the kind's word added to the CHECK (and
    to the verdict's CASE when it counts as one), as m012 did for "distractor"."""
    for table, (body, kept, index) in _ANSWER_TABLES.items():
        present = {row[1] for row in db.execute(f"PRAGMA table_info({table})").fetchall()}
        added = [(name, declared) for name, declared in _ADDED_LATER.get(table, ())
                 if name in present]
        body = body.replace("ANSWER", answer + "".join(
            f",\n            {declared}" for _, declared in added))
        listed = ", ".join([*kept, *(name for name, _ in added)])
        _rebuild(db, table, migration, body, listed, listed, index)


@migrations()
def m012_distractor(db: Database) -> None:
    """A fourth kind of answer, "distractor": noise that misleads. It reads as verdict 0; the
    distractor column is generated from the answer beside verdict and unsure."""
    rebuild_answer_tables(db, "m012", _M012_ANSWER)


@migrations()
def m013_align(db: Database) -> None:
    """`annotator align`'s record: one row a run (its splits of the dev goldens, the test
    comparison, what was kept) and one a candidate prompt (the optimizer's request and reply,
    the prompt, its validation score, its cost)."""
    db.execute(
        """
        CREATE TABLE align_runs (
            id INTEGER PRIMARY KEY,
            judge TEXT NOT NULL,
            model TEXT NOT NULL,
            optimizer_model TEXT NOT NULL,
            optimizer_url TEXT,
            settings TEXT NOT NULL,
            train TEXT NOT NULL,
            validation TEXT NOT NULL,
            incumbent_kappa REAL,
            best_candidate INTEGER,
            test_chunks INTEGER,
            test_kappa REAL,
            incumbent_test_kappa REAL,
            test_difference REAL,
            test_low REAL,
            test_high REAL,
            outcome TEXT,
            registered_as TEXT,
            prompt_path TEXT,
            calls INTEGER NOT NULL DEFAULT 0,
            tokens_in INTEGER NOT NULL DEFAULT 0,
            tokens_out INTEGER NOT NULL DEFAULT 0,
            cost REAL,
            started_at TEXT NOT NULL,
            finished_at TEXT
        )"""
    )
    db.execute(
        """
        CREATE TABLE align_candidates (
            id INTEGER PRIMARY KEY,
            run_id INTEGER NOT NULL REFERENCES align_runs(id) ON DELETE CASCADE,
            round INTEGER NOT NULL CHECK (round >= 1),
            number INTEGER NOT NULL CHECK (number >= 1),
            request TEXT NOT NULL,
            reply TEXT,
            rationale TEXT,
            prompt TEXT,
            error TEXT,
            validation_kappa REAL,
            validation_agreement REAL,
            validation_chunks INTEGER,
            calls INTEGER NOT NULL DEFAULT 0,
            tokens_in INTEGER NOT NULL DEFAULT 0,
            tokens_out INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            UNIQUE (run_id, round, number)
        )"""
    )


@migrations()
def m014_trust(db: Database) -> None:
    """`annotator trust`'s thresholds: one row a fit (the judge's confidence above which its
    verdict is kept, the target it was fitted to on the dev split, and what the test split
    showed once); the latest row of a judge is in force."""
    db.execute(
        """
        CREATE TABLE trust_thresholds (
            id INTEGER PRIMARY KEY,
            judge TEXT NOT NULL,
            truth TEXT NOT NULL,
            confidence TEXT NOT NULL CHECK (confidence IN ('logprobs', 'runs')),
            alpha REAL NOT NULL,
            delta REAL NOT NULL,
            threshold REAL,
            dev_chunks INTEGER NOT NULL,
            dev_kept INTEGER NOT NULL,
            test_chunks INTEGER NOT NULL,
            test_kept INTEGER NOT NULL,
            test_agreement REAL,
            test_low REAL,
            test_high REAL,
            created_at TEXT NOT NULL
        )"""
    )


@migrations()
def m015_epochs(db: Database) -> None:
    """Judge epochs and re-checks (store/epochs.py, annotator/recheck.py): each verdict's epoch
    (what served it), one row an epoch (its model and fingerprint as served, the endpoint, the
    newest verdict it holds), the frozen canary, each re-check and its calls. Verdicts stored
    before are given the epoch of their judge's configured model with no fingerprint."""
    from annotator.store.epochs import definition, epoch_of

    db.execute("ALTER TABLE verdicts ADD COLUMN epoch TEXT")
    db.execute(
        """
        CREATE TABLE epochs (
            judge TEXT NOT NULL REFERENCES judges(name) ON DELETE CASCADE,
            epoch TEXT NOT NULL,
            model TEXT,
            fingerprint TEXT,
            endpoint TEXT,
            first_at TEXT NOT NULL,
            last_id INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (judge, epoch)
        )"""
    )
    db.execute(
        """
        CREATE TABLE canary (
            chunk_id INTEGER PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
            position INTEGER NOT NULL
        )"""
    )
    db.execute(
        """
        CREATE TABLE rechecks (
            id INTEGER PRIMARY KEY,
            judge TEXT NOT NULL REFERENCES judges(name) ON DELETE CASCADE,
            epoch_before TEXT,
            started_at TEXT NOT NULL,
            finished_at TEXT,
            figures TEXT
        )"""
    )
    db.execute(
        """
        CREATE TABLE recheck_calls (
            id INTEGER PRIMARY KEY,
            recheck_id INTEGER NOT NULL REFERENCES rechecks(id) ON DELETE CASCADE,
            chunk_id INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
            verdict INTEGER CHECK (verdict IN (0, 1)),
            reason TEXT,
            p_relevant REAL CHECK (p_relevant BETWEEN 0 AND 1),
            grade INTEGER,
            error TEXT,
            raw_reply TEXT,
            confidence_note TEXT,
            tokens_in INTEGER,
            tokens_out INTEGER,
            tokens_cached INTEGER,
            latency_ms REAL,
            requests INTEGER,
            request_sha256 TEXT,
            epoch TEXT,
            created_at TEXT NOT NULL,
            CHECK ((verdict IS NULL) <> (error IS NULL))
        )"""
    )
    db.execute("CREATE INDEX recheck_calls_recheck ON recheck_calls(recheck_id, chunk_id)")
    examples: dict[str, list[tuple[Any, ...]]] = {}
    for row in db.execute("SELECT judge, golden_id, rank, verdict FROM judge_examples "
                          "ORDER BY judge, position").fetchall():
        examples.setdefault(row[0], []).append(tuple(row[1:]))
    judged = db.execute("SELECT j.name, j.model, j.base_url, j.prompt_id, j.prompt_sha256, "
                        "j.parameters, j.prompt_text, j.created_at FROM judges j "
                        "WHERE EXISTS (SELECT 1 FROM verdicts v WHERE v.judge = j.name)").fetchall()
    for name, model, base_url, prompt_id, sha, parameters, text, created in judged:
        epoch = epoch_of(definition({"prompt_id": prompt_id, "prompt_sha256": sha,
                                     "parameters": parameters, "prompt_text": text},
                                    examples.get(name, [])), model, None)
        db.execute("UPDATE verdicts SET epoch = ? WHERE judge = ?", [epoch, name])
        db.execute("INSERT INTO epochs(judge, epoch, model, fingerprint, endpoint, first_at, "
                   "last_id) VALUES (?, ?, ?, NULL, ?, ?, (SELECT coalesce(max(id), 0) FROM "
                   "verdicts WHERE judge = ? AND error IS NULL))",
                   [name, epoch, model, base_url, created, name])


@migrations()
def m016_team(db: Database) -> None:
    """A team's labelling: its guidelines, each version stored whole; the newest version each
    person has been shown; on every label the version its person had been shown when deciding
    it (None: no guidelines shown yet); and each person's claim on a golden under a quota of
    people per golden (a lease until done: expires_at, then done_at)."""
    db.execute(
        """
        CREATE TABLE guidelines (
            version INTEGER PRIMARY KEY CHECK (version >= 1),
            text TEXT NOT NULL,
            sha256 TEXT NOT NULL,
            source TEXT,
            set_by TEXT,
            set_at TEXT NOT NULL
        )"""
    )
    db.execute(
        """
        CREATE TABLE guideline_reads (
            annotator TEXT PRIMARY KEY,
            version INTEGER NOT NULL,
            read_at TEXT NOT NULL
        )"""
    )
    db.execute("ALTER TABLE labels ADD COLUMN guideline INTEGER CHECK (guideline >= 1)")
    db.execute(
        """
        CREATE TABLE claims (
            golden_id TEXT NOT NULL REFERENCES goldens(id) ON DELETE CASCADE,
            annotator TEXT NOT NULL,
            claimed_at TEXT NOT NULL,
            expires_at TEXT,
            done_at TEXT,
            PRIMARY KEY (golden_id, annotator),
            CHECK ((expires_at IS NULL) <> (done_at IS NULL))
        )"""
    )
    db.execute("CREATE INDEX claims_annotator ON claims(annotator, done_at)")
    # The chunks a judge was asked about more than once (the leaderboard's flip rate): found
    # at once where none are, as for every imported judge, instead of by reading its calls.
    db.execute("CREATE INDEX verdicts_repeated ON verdicts(judge, chunk_id) WHERE repetition > 1")
