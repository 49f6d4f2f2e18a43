"""A session in PostgreSQL: the same commands, the same bytes out, on a real server the tests
start themselves (tests/pg_server.py)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner

from annotator.cli import cli
from annotator.place import place_name, shown
from annotator.store.session import Session
from tests import pg_server
from tests.conftest import TEAM_BANKING, dump

_names = itertools.count(1)


@pytest.fixture(scope="session")
def server() -> Iterator[pg_server.Server]:
    with pg_server.running() as started:
        yield started


@pytest.fixture
def url(server: pg_server.Server) -> str:
    """A new, empty database of its own for each test."""
    return server.create_database(f"t{next(_names)}")


def run(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def fails(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 2, result.output
    return result.output


def test_a_new_database_becomes_a_session_and_opens_again(url: str) -> None:
    with Session(url) as session:
        first = session.session_id
        assert session.dialect == "postgresql"
    with Session(url, create=False) as session:
        assert session.session_id == first
        assert session.count_goldens() == 0


def _workflow(place: str, folder: Path) -> dict[str, bytes]:
    """Import, decide, note, then every output a team reads; each as bytes, the session's
    own name in it replaced by SESSION."""
    folder.mkdir()
    run("import", str(TEAM_BANKING), "--session", place)
    with Session(place, create=False) as session:
        chunk_ids = [c for ids in session.chunk_ids().values() for c in ids]
        session.decide("carol", chunk_ids[0], 1, "set")
        session.decide("carol", chunk_ids[1], 0, "set")
        session.decide("carol", chunk_ids[1], 1, "flip")
        session.set_note("carol", chunk_ids[2], "odd [b]bracket[/b] ✓ שלום")
        session.undo("carol")
        session.decide("dan", chunk_ids[3], 0, "set")
        session.set_guidelines("# Rules\nA chunk is useful when it answers.", source=None,
                               by="lead")
        session.decide("dan", chunk_ids[4], 1, "accept")
        where = session.where
    outputs = {}
    for name, args in {
            "jsonl": ("export", place, "--format", "jsonl"),
            "qrels": ("export", place, "--format", "qrels"),
            "calibration": ("export", place, "--format", "calibration"),
            "report": ("report", place, "--format", "json", "--all-annotators"),
            "judges": ("judges", place, "--format", "json"),
    }.items():
        out = folder / f"{name}.out"
        run(*args, "--output", str(out))
        outputs[name] = out.read_bytes().replace(where.encode(), b"SESSION")
    return outputs


def _clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every stored time from one clock that starts at the same instant for each run."""
    ticks = itertools.count()
    monkeypatch.setattr("annotator.store.session.now",
                        lambda: f"2026-12-07T10:00:{next(ticks) % 60:02d}.000+00:00")


def test_the_same_events_give_the_same_bytes_on_both_stores(
        url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _clock(monkeypatch)
    on_file = _workflow(str(tmp_path / "s.db"), tmp_path / "file")
    _clock(monkeypatch)
    on_server = _workflow(url, tmp_path / "server")
    assert on_file.keys() == on_server.keys()
    for name, expected in on_file.items():
        assert on_server[name] == expected, name
    assert b"carol" in on_file["jsonl"] and "שלום".encode() in on_file["jsonl"]


def test_copy_moves_a_session_whole_both_ways(url: str, tmp_path: Path) -> None:
    original = tmp_path / "team.db"
    run("import", str(TEAM_BANKING), "--session", str(original))
    with Session(original, create=False) as session:
        first = next(iter(session.chunk_ids().values()))[0]
        session.decide("carol", first, 1, "set")
        session.undo("carol")
        session.set_guidelines("Be kind.", source=None, by="lead")
        session.claim(next(iter(session.golden_ids())), "carol", 2, 60)
    said = run("copy", str(original), url)
    assert "counted on both sides" in said and "16 goldens" in said
    back = tmp_path / "back.db"
    run("copy", url, str(back))
    assert sorted(dump(back)) == sorted(dump(original))  # a file's row order is no content
    with Session(url, create=False) as session:  # new rows after copied ones get new ids
        session.decide("carol", first, 0, "set")
        assert session.labels("carol")[first].verdict == 0
    refused = fails("copy", str(original), url)
    assert "already holds tables" in refused


# Each command as a team runs it, SESSION standing for the session's place; True: its output
# is compared between the stores byte for byte (False: it holds times or counts of requests);
# "refused": it refuses (exit 2, what the store holds is too little), in the same words.
COMMANDS: list[tuple[tuple[str, ...], bool | str]] = [
    (("import", str(TEAM_BANKING), "--session", "SESSION"), True),
    (("judge", "SESSION", "--model", "fake", "--name", "fake-judge"), False),
    (("split", "SESSION", "--dev", "0.5", "--seed", "1"), True),
    (("sample", "SESSION", "--size", "8", "--seed", "3", "--format", "json"), True),
    (("plan", "SESSION", "--judge", "fake-judge"), True),
    (("info", "SESSION"), True),
    (("guidelines", "SESSION", "set", "GUIDE"), True),
    (("guidelines", "SESSION", "list"), True),
    (("guidelines", "SESSION", "show"), True),
    (("trust", "SESSION", "--judge", "fake-judge", "--format", "json"), True),
    (("recheck", "SESSION", "--judge", "fake-judge", "--canary", "10"), False),
    (("recheck", "SESSION", "--judge", "fake-judge", "--history"), False),
    (("probe", "SESSION", "--judge", "fake-judge", "--goldens", "3"), False),
    (("align", "SESSION", "--judge", "fake-judge", "--optimizer-model", "fake",
      "--dry-run"), "refused"),
    (("judges", "SESSION"), False),  # the judge's latencies
    (("report", "SESSION", "--all-annotators", "--judge", "fake-judge"), True),
    (("report", "SESSION", "--format", "json", "--group-by", "retriever", "--all-annotators", "--judge",
      "sample-judge"), True),
    (("export", "SESSION", "--format", "ragas-annotation", "--judge", "fake-judge"), True),
    (("export", "SESSION", "--format", "run", "--system", "bm25"), True),
    (("export", "SESSION", "--format", "calibration"), True),
    (("export", "SESSION", "--format", "feedback", "--judge", "fake-judge"), True),
    (("align-log", "SESSION"), True),
    (("batches", "SESSION"), True),
    (("merge", "SESSION", "SESSION", "--output", "MERGED"), True),
    (("info", "MERGED"), True),
    (("remove-judge", "SESSION", "sample-judge"), True),
    (("info", "SESSION"), True),
]


def _commands(place: str, merged: str, folder: Path, env: dict[str, str]) -> list[str]:
    guide = folder / "guide.md"
    guide.write_text("# Useful\nA chunk is useful when it states part of the answer.\n")
    outputs = []
    for args, compared in COMMANDS:
        typed = [{"SESSION": place, "GUIDE": str(guide), "MERGED": merged}.get(a, a)
                 for a in args]
        result = CliRunner().invoke(cli, typed, env=env, catch_exceptions=False)
        assert result.exit_code == (2 if compared == "refused" else 0), (args, result.output)
        if compared:
            said = result.output.replace(f" {place_name(place)}\n", " NAME\n")
            for name, typed_as in (("SESSION", place), ("MERGED", merged)):
                said = said.replace(f'"{shown(typed_as)}"', name).replace(shown(typed_as), name)
            # A line wraps where its place's name ends: the words are compared, not the wrap.
            outputs.append(" ".join(said.split()))
    return outputs


def test_every_command_takes_a_url_and_says_the_same(server: pg_server.Server, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.fake_openai import FakeOpenAI

    with FakeOpenAI() as fake:
        env = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": fake.base_url, "COLUMNS": "120"}
        _clock(monkeypatch)
        on_file = _commands(str(tmp_path / "s.db"), str(tmp_path / "merged.db"), tmp_path, env)
        _clock(monkeypatch)
        on_server = _commands(server.create_database("commands"),
                              server.create_database("merged"), tmp_path, env)
    for (args, _), said_file, said_server in zip(
            [c for c in COMMANDS if c[1]], on_file, on_server, strict=True):
        assert said_server == said_file, args


def _refused(*args: str) -> str:
    """A command that must refuse: exit 2, one sentence, no traceback, no password."""
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert pg_server.PASSWORD not in result.output
    return " ".join(result.output.split())


def test_bad_urls_are_one_sentence_each_and_never_show_the_password(
        server: pg_server.Server, tmp_path: Path) -> None:
    import socket

    goldens = str(TEAM_BANKING)
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        closed = free.getsockname()[1]
    unreachable = f"postgresql://team:{pg_server.PASSWORD}@127.0.0.1:{closed}/x"
    said = _refused("import", goldens, "--session", unreachable)
    assert said.startswith("Error: Could not reach the PostgreSQL server of postgresql://***@")
    assert "Check that the server runs" in said

    server.create_database("guarded")
    wrong = server.tcp_url("guarded", password="not-the-password")
    said = _refused("info", wrong)
    assert "refused the login: the user or its password is wrong" in said
    assert "not-the-password" not in said

    said = _refused("info", server.tcp_url("no_such_database"))
    assert "names a database the server does not have" in said

    # Another application's tables: refused, and left exactly as they were.
    foreign = server.create_database("crm")
    with psycopg.connect(foreign, autocommit=True) as conn:
        conn.execute("CREATE TABLE customers (id int PRIMARY KEY, name text)")
        conn.execute("INSERT INTO customers VALUES (1, 'Ada')")
    said = _refused("import", goldens, "--session", server.tcp_url("crm"))
    assert "a PostgreSQL database of another application (its tables: customers)" in said
    with psycopg.connect(foreign) as conn:
        assert conn.execute("SELECT table_name FROM information_schema.tables WHERE "
                            "table_schema = 'public'").fetchall() == [("customers",)]
        assert conn.execute("SELECT * FROM customers").fetchall() == [(1, "Ada")]

    # A session a newer release wrote: refused by name, nothing written.
    newer = server.create_database("newer")
    run("import", goldens, "--session", newer)
    with psycopg.connect(newer, autocommit=True) as conn:
        conn.execute("INSERT INTO _sqlite_migrations(migration_set, name, applied_at) "
                     "VALUES ('cp-annotator', 'm999_future', 'then')")
        before = conn.execute("SELECT count(*) FROM events").fetchone()
    said = _refused("guidelines", newer, "set", str(TEAM_BANKING))
    assert "written by a newer cp-annotator (its schema has m999_future" in said
    with psycopg.connect(newer) as conn:
        assert conn.execute("SELECT count(*) FROM events").fetchone() == before
        assert conn.execute("SELECT count(*) FROM guidelines").fetchone() == (0,)


def test_a_failed_import_into_a_new_database_leaves_it_empty(url: str, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "user_input": "q", "reference": "r", "retrieved_contexts": '
                   '["c"]}\n{"id": \n')
    said = _refused("import", str(bad), "--session", url)
    assert "bad.jsonl" in said and "line 2" in said
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT count(*) FROM information_schema.tables WHERE "
                            "table_schema = 'public'").fetchone() == (0,)


def test_the_password_in_a_url_is_never_stored(server: pg_server.Server) -> None:
    server.create_database("stored")
    url = server.tcp_url("stored")
    run("import", str(TEAM_BANKING), "--session", url)
    run("guidelines", url, "set", str(TEAM_BANKING))
    with psycopg.connect(url) as conn:
        for (table,) in conn.execute("SELECT table_name FROM information_schema.tables WHERE "
                                     "table_schema = 'public'").fetchall():
            text = str(conn.execute(f'SELECT * FROM "{table}"').fetchall())
            assert pg_server.PASSWORD not in text, table


def test_an_ir_collection_imports_into_a_database_as_into_a_file(
        url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.test_import_trec import JUDGES, collection

    c = collection(tmp_path, queries=12, docs=6)
    args = ["--queries", str(c["topics"]), "--pool", str(c["files"]["nist"]), "--corpus",
            str(c["corpus"]), "--labels", f"nist={c['files']['nist']}",
            *(a for name in JUDGES for a in ("--judge", f"{name}={c['files'][name]}"))]
    said: dict[str, tuple[bytes, str]] = {}
    for place in (str(tmp_path / "trec.db"), url):
        _clock(monkeypatch)
        run("import-trec", place, *args)
        out = tmp_path / f"qrels-{len(said)}.txt"
        run("export", place, "--format", "qrels", "--output", str(out))
        board = CliRunner().invoke(cli, ["judges", place, "--format", "json"]).output
        said[place] = (out.read_bytes(), board.replace(shown(place), "SESSION"))
    file_said, server_said = said.values()
    assert server_said == file_said
    assert file_said[0].count(b"\n") == 12 * 6


def test_the_python_api_reads_a_database_as_a_file(url: str, tmp_path: Path) -> None:
    from annotator import api

    frames = []
    for place in (str(tmp_path / "s.db"), url):
        [summary] = api.import_goldens(place, TEAM_BANKING)
        assert summary.goldens_added == 16
        board = api.leaderboard(place, annotator="sample-reviewer", bootstrap=200)
        report = api.report(place, judge="sample-judge", annotators="sample-reviewer",
                            bootstrap=200)
        frames.append((api.chunks_frame(place).to_dict("records"), board["judges"],
                       {k: v for k, v in report.items() if k != "session"}))
    assert frames[0] == frames[1]


@pytest.mark.parametrize(("sqlite", "postgresql"), [
    ("SELECT a FROM t WHERE b = ? AND c = 'it''s ? 5%'",
     "SELECT a FROM t WHERE b = %s AND c = 'it''s ? 5%%'"),
    ("SELECT a FROM t WHERE b = :start", "SELECT a FROM t WHERE b = %(start)s"),
    ("SELECT 1 FROM v WHERE epoch IS ? AND x IS NOT ?",
     "SELECT 1 FROM v WHERE epoch IS NOT DISTINCT FROM %s AND x IS DISTINCT FROM %s"),
    ("SELECT answer IS 'unsure' FROM labels",
     "SELECT answer IS NOT DISTINCT FROM 'unsure' FROM labels"),
    ("INSERT OR IGNORE INTO checks(a) VALUES (?)",
     "INSERT INTO checks(a) VALUES (%s) ON CONFLICT DO NOTHING"),
    ("SELECT count(*), sum(verdict = truth) FROM c",
     "SELECT count(*), sum((verdict = truth)::int) FROM c"),
    ("SELECT min(a, b), max(x.c, 1) FROM t", "SELECT LEAST(a, b), GREATEST(x.c, 1) FROM t"),
    ("SELECT l.v FROM l JOIN (SELECT chunk_id, verdict, max(id) FROM verdicts WHERE j = ? "
     "GROUP BY chunk_id) v ON v.chunk_id = l.chunk_id GROUP BY 1",
     "SELECT l.v FROM l JOIN (SELECT DISTINCT ON (chunk_id) chunk_id, verdict, id FROM verdicts "
     "WHERE j = %s ORDER BY chunk_id, id DESC) v ON v.chunk_id = l.chunk_id GROUP BY 1"),
    ("SELECT max(id) FROM p GROUP BY judge", "SELECT max(id) FROM p GROUP BY judge"),
    ("SELECT text FROM chunks WHERE id IN (SELECT value FROM json_each(?))",
     "SELECT text FROM chunks WHERE id = ANY(translate(%s, '[]', '{}')::bigint[])"),
])
def test_the_stores_sql_in_postgresqls_words(sqlite: str, postgresql: str) -> None:
    from annotator.store.postgres import translate

    assert translate(sqlite) == postgresql



def test_a_database_an_older_release_laid_out_is_upgraded_with_every_row(url: str) -> None:
    said = run("import", str(TEAM_BANKING), "--session", url)
    assert "16 goldens added" in said
    with Session(url, create=False) as session:
        first = session.chunk_ids()[session.golden_ids()[0]][0]
        session.decide("carol", first, 0, "set", note="an old note")
        before = sorted(dump(url))
    # What this database looked like before m016_team: no claims, no guidelines, no label's
    # guideline column, and m016 not in its record.
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP TABLE claims, guidelines, guideline_reads")
        conn.execute("ALTER TABLE labels DROP COLUMN guideline")
        conn.execute("DELETE FROM _sqlite_migrations WHERE name = 'm016_team'")
    told: list[object] = []
    Session.upgrading = told.append
    try:
        with Session(url, create=False) as session:
            assert session.labels("carol")[first].note == "an old note"
            assert session.claim(session.golden_ids()[0], "dan", 2, 60)  # m016's table works
            session.set_guidelines("Be kind.", source=None, by="lead")
    finally:
        Session.upgrading = None
    assert told
    after = dump(url)
    kept = [line for line in before
            if not line.startswith(("claims", "guidelines", "events", "labels", "_sqlite"))]
    assert set(kept) <= set(after)  # every row the old layout held is back, ids and all
    assert sum(line.startswith("labels") for line in after) == sum(
        line.startswith("labels") for line in before)
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT count(*) FROM pg_namespace WHERE nspname LIKE "
                            "'cp_annotator%'").fetchone() == (0,)


def test_a_write_held_up_past_the_timeout_is_the_busy_sentence_and_saves_nothing(
        url: str) -> None:
    from annotator.errors import NotSaved
    from annotator.store.postgres import WRITE_LOCK

    run("import", str(TEAM_BANKING), "--session", url)
    with psycopg.connect(url) as other, Session(url, create=False, busy_timeout=0.3) as session:
        other.execute("SELECT pg_advisory_xact_lock(%s)", [WRITE_LOCK])  # a long write elsewhere
        first = session.chunk_ids()[session.golden_ids()[0]][0]
        with pytest.raises(NotSaved) as refused:
            session.decide("carol", first, 1, "set")
        assert refused.value.busy and "is busy" in str(refused.value)
        assert pg_server.PASSWORD not in str(refused.value)
        other.rollback()
        assert session.labels("carol") == {}
        session.decide("carol", first, 1, "set")  # the lock let go: it saves
        assert session.labels("carol")[first].verdict == 1
