"""Old session files open, upgrade and read back identically; the schema matches the dataclasses.

Every migration after the first has a committed file written by the schema before it
(tests/session_fixtures.py), so each is tested on a file a previous release wrote.
"""

from __future__ import annotations

import shutil
import sqlite3
from dataclasses import fields
from pathlib import Path

import pytest

from annotator.models import JudgeVerdict
from annotator.store.migrations import migrations
from annotator.store.rows import TABLES, columns
from annotator.store.session import Session
from annotator.verdict import DISTRACTOR, KINDS, UNSURE
from tests.session_fixtures import FLAGGED, GOLDENS, fixture_path

LATER = [m.name for m in migrations._migrations][1:]
RENAMED = {("m010_answer_kinds", "check_answers", "answer"): "verdict"}
"""(migration, table, old column) -> the column that reads as it did after the upgrade: a check
answer's verdict was its "answer" before answers were kinds, whose word "answer" now holds."""


def test_every_migration_after_the_first_has_a_fixture_written_before_it() -> None:
    missing = [name for name in LATER if not fixture_path(name).exists()]
    assert not missing, f"write them with: python -m tests.session_fixtures ({missing})"


def _rows(path: Path, table: str, names: list[str]) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(f"SELECT {', '.join(names)} FROM {table} ORDER BY rowid").fetchall()
    finally:
        conn.close()


def _tables(path: Path) -> dict[str, list[str]]:
    conn = sqlite3.connect(path)
    try:
        names = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
        # table_xinfo: a column an upgrade turned into a generated one still reads as it did.
        return {t: [c[1] for c in conn.execute(f"PRAGMA table_xinfo({t})")] for t in names}
    finally:
        conn.close()


@pytest.mark.parametrize("migration", LATER)
def test_an_old_file_upgrades_and_reads_back_identically(tmp_path: Path, migration: str) -> None:
    old = fixture_path(migration)
    path = tmp_path / "old.db"
    shutil.copy(old, path)
    before = _tables(path)
    with Session(path, create=False) as session:
        assert migrations.pending(session.db) == []
        assert session.session_id == "fixture-session-0001"
        records = list(session.export_records())
        [judge] = session.judges()
        assert (judge.name, judge.model, judge.prompt_id) == ("old-judge", "gpt-4o-mini", "builtin")
        assert judge.parameters == {"max_tokens": 512, "temperature": 0.0}
        assert session.events("alice")[0]["kind"] == "decide"
    # What the old release wrote reads back through today's Session, value for value.
    assert [r.id for r in records] == [g["id"] for g in GOLDENS]
    for record, golden in zip(records, GOLDENS, strict=True):
        assert (record.user_input, record.reference, record.response, record.metadata) == (
            golden["user_input"], golden["reference"], golden["response"], golden["metadata"])
        assert record.retrieved_contexts == golden["chunks"]
        assert record.judge_verdicts["old-judge"] == [
            None if said is None else JudgeVerdict(said[0], said[1]) for said in golden["judge"]]
        assert record.human_labels["alice"] == golden["alice"]
        assert record.human_notes.get("alice", [None] * 3) == golden["notes"]
    # And every old column of every old table still holds exactly what it held.
    after = _tables(path)
    for table, names in before.items():
        if table == "_sqlite_migrations":
            continue
        assert set(names) <= set(after[table])
        now = [RENAMED.get((migration, table, name), name) for name in names]
        assert _rows(old, table, names) == _rows(path, table, now), table


def test_answers_kept_as_a_verdict_and_a_flag_upgrade_to_their_kinds(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    shutil.copy(fixture_path("m010_answer_kinds"), path)
    with Session(path, create=False) as session:
        [first, _] = list(session.export_records())
        assert first.human_labels["bob"] == FLAGGED["bob"]
        assert first.human_notes["bob"] == FLAGGED["bob-notes"]
        [check] = list(session.export_checks())
        answers = [a for a in check.answers["carol"] if a is not None]
        assert [(a.get("truth"), a.get("answer"), a.get("unsure", False)) for a in answers] == [
            (truth, answer, bool(unsure)) for _, truth, answer, unsure in FLAGGED["checks"]]
        assert session.check_scores() == {"carol": (1, 1)}  # rank 3 has no truth
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("SELECT answer FROM labels WHERE annotator = 'bob' ORDER BY id"
                            ).fetchall() == [("useful",), ("unsure",)]
        assert conn.execute("SELECT answer FROM labels WHERE annotator = 'alice' ORDER BY id"
                            ).fetchall() == [("useful",), ("noise",), ("noise",), ("useful",),
                                             ("noise",)]
        assert conn.execute("SELECT chunk_id, answer, updated_at FROM label_conflicts ORDER BY id"
                            ).fetchall() == [(1, "noise", FLAGGED["conflicts"][0][2]),
                                             (2, "useful", FLAGGED["conflicts"][1][2])]
        assert conn.execute("SELECT answer FROM check_answers ORDER BY rank").fetchall() == [
            ("useful",), ("unsure",), ("noise",)]
        with pytest.raises(sqlite3.OperationalError, match="generated column"):
            conn.execute("UPDATE labels SET verdict = 0")  # the flags follow the answer only
    finally:
        conn.close()


@pytest.mark.parametrize("table", ["labels", "label_conflicts", "check_answers"])
def test_the_schema_stores_every_kind_of_answer_and_nothing_else(session: Session,
                                                                   table: str) -> None:
    # A kind added to verdict.py without the migration that lets the schema hold it fails here.
    conn = session.conn  # on either store: the schema itself refuses
    owner = {"labels": "chunk_id", "label_conflicts": "chunk_id", "check_answers": "check_id"}
    conn.execute("INSERT INTO goldens(id, position, user_input, metadata, content_sha256, "
                 "created_at) VALUES ('g', 1, 'q', '{}', 'x', 't')")
    conn.execute("INSERT INTO chunks(id, golden_id, rank, text) VALUES (1, 'g', 1, 'c')")
    conn.execute("INSERT INTO checks(id, source, golden_id, record, created_at) "
                 "VALUES (1, 'gold', 'g', '{}', 't')")
    stamps = {"labels": "created_at, updated_at", "label_conflicts": "updated_at",
              "check_answers": "answered_at, rank"}[table]
    values = {"labels": "'t', 't'", "label_conflicts": "'t'", "check_answers": "'t', 1"}[table]
    for person, kind in enumerate(KINDS):
        conn.execute(f"INSERT INTO {table}(annotator, {owner[table]}, answer, {stamps}) "
                     f"VALUES ('p{person}', 1, ?, {values})", [kind.word])
    read = conn.execute(f"SELECT answer, verdict, unsure, distractor FROM {table} ORDER BY id"
                        ).fetchall()
    assert read == [(k.word, k.verdict, int(k.answer == UNSURE), int(k.answer == DISTRACTOR))
                    for k in KINDS]
    with pytest.raises(sqlite3.IntegrityError, match=r"(?i)check"):
        conn.execute(f"INSERT INTO {table}(annotator, {owner[table]}, answer, {stamps}) "
                     f"VALUES ('other', 1, 'maybe', {values})")


def test_upgrading_twice_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    shutil.copy(fixture_path(LATER[0]), path)
    Session(path, create=False).close()
    first = _tables(path), {t: _rows(path, t, c) for t, c in _tables(path).items()}
    Session(path, create=False).close()
    assert first == (_tables(path), {t: _rows(path, t, c) for t, c in _tables(path).items()})


def test_every_row_dataclass_names_real_columns_of_its_table(session: Session) -> None:
    # Rows become dataclasses by column name (store/rows.py): each field is a column.
    for cls, table in TABLES.items():
        # Generated columns (a label's verdict) are columns a row reads too.
        names = {c[0] for c in session.conn.execute(f"SELECT * FROM {table} LIMIT 0").description}
        missing = [f.name for f in fields(cls) if f.name not in names]
        assert not missing, f"{cls.__name__} fields without a column in {table}: {missing}"
        session.conn.execute(f"SELECT {columns(cls)} FROM {table} LIMIT 0")  # and the SQL runs


def test_a_session_from_a_newer_version_is_refused_by_name_and_left_as_it_is(
        tmp_path: Path) -> None:
    import sqlite3

    from annotator.errors import SessionError
    from tests.conftest import dump

    path = tmp_path / "future.db"
    Session(path).close()
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("INSERT INTO _sqlite_migrations(migration_set, name, applied_at) "
                     "VALUES ('cp-annotator', 'm009_from_the_future', '2027-01-01')")
    conn.close()
    before = dump(path)
    for create in (True, False):
        with pytest.raises(SessionError, match=r"written by a newer cp-annotator \(its schema "
                           r"has m009_from_the_future.*Upgrade: pip install --upgrade"):
            Session(path, create=create)
    assert dump(path) == before


def test_the_names_a_session_checks_on_opening_are_the_migrations_in_order() -> None:
    from sqlite_utils import Database

    from annotator.store.versions import NAMES

    assert [m.name for m in migrations.pending(Database(memory=True))] == list(NAMES)


def test_opening_an_up_to_date_session_does_not_import_sqlite_utils(tmp_path: Path) -> None:
    import subprocess
    import sys

    with Session(tmp_path / "s.db"):
        pass
    code = ("import sys; from annotator.store.session import Session; "
            f"s = Session({str(tmp_path / 's.db')!r}, create=False); s.golden_ids(); s.close(); "
            "print('sqlite_utils' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_new_session_file_imports_neither_pandas_nor_numpy(tmp_path: Path) -> None:
    import subprocess
    import sys

    old = tmp_path / "old.db"
    shutil.copy(fixture_path(LATER[-1]), old)
    code = ("import sys; from annotator.store.session import Session; "
            f"Session({str(tmp_path / 's.db')!r}).close(); "
            "print('sqlite_utils' in sys.modules, 'pandas' in sys.modules, 'numpy' in sys.modules);"
            f"Session({str(old)!r}).close(); "
            "print('sqlite_utils' in sys.modules, 'pandas' in sys.modules, 'numpy' in sys.modules);"
            " import pandas, numpy")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # A new file gets the stored schema: none of them. An old file is migrated through
    # sqlite-utils without pandas or numpy, and both import as usual afterwards.
    assert out.stdout.split() == ["False", "False", "False", "True", "False", "False"]


def _master(path: Path) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master "
                            "ORDER BY type, name").fetchall()
    finally:
        conn.close()


def test_the_stored_schema_is_what_the_migrations_make(tmp_path: Path) -> None:
    from sqlite_utils import Database

    from annotator.store import schema
    from annotator.store.versions import NAMES

    migrated = tmp_path / "migrated.db"
    conn = sqlite3.connect(migrated)
    migrations.apply(Database(conn))
    conn.close()
    conn = sqlite3.connect(migrated)
    try:  # the script, as 'python -m annotator.store.schema' would write it now
        assert schema.SCRIPT.read_text(encoding="utf-8") == schema.dumped(conn), (
            "write it again with: python -m annotator.store.schema")
    finally:
        conn.close()
    with Session(tmp_path / "new.db") as new:
        assert migrations.pending(new.db) == []
        assert [m.name for m in migrations.applied(new.db)] == list(NAMES)
        assert len(new.session_id) == 32
    assert _master(tmp_path / "new.db") == _master(migrated)
    with Session(tmp_path / "other.db") as other, Session(tmp_path / "new.db") as new:
        assert other.session_id != new.session_id  # each file its own identity


def test_the_cli_says_it_is_upgrading_an_old_file_and_only_once(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from annotator.cli import cli

    path = tmp_path / "old.db"
    shutil.copy(fixture_path(LATER[-1]), path)
    first = CliRunner().invoke(cli, ["info", str(path)])
    assert first.exit_code == 0, first.output
    assert f"Upgrading {path} to this release's session schema" in first.output
    again = CliRunner().invoke(cli, ["info", str(path)])
    assert again.exit_code == 0 and "Upgrading" not in again.output
