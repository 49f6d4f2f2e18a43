"""A session in PostgreSQL: the same commands, the same bytes out, on a real server the tests
start themselves (tests/pg_server.py)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

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
