"""A session in PostgreSQL: the same commands, the same bytes out, on a real server the tests
start themselves (tests/pg_server.py)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from annotator.cli import cli
from annotator.store.session import Session
from tests import pg_server
from tests.conftest import TEAM_BANKING

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
        shown = session.where
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
        outputs[name] = out.read_bytes().replace(shown.encode(), b"SESSION")
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
