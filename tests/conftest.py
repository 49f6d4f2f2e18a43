"""Shared fixtures: real session files in tmp_path, the bundled samples, small input writers."""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import tempfile
from collections.abc import Container, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import settings
from hypothesis.configuration import set_hypothesis_home_dir

from annotator.formats import read_goldens
from annotator.store.session import Session
from annotator.verdict import flipped

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
# The suite writes nothing into the checkout: hypothesis keeps no example database (the tests
# are derandomised or seeded where it matters) and its caches go to the temporary folder.
set_hypothesis_home_dir(os.path.join(tempfile.gettempdir(), "cp-annotator-hypothesis"))
settings.register_profile("cp-annotator", database=None)
settings.load_profile("cp-annotator")  # tests/test_ragas.py imports ragas directly

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = sorted((ROOT / "sample_sessions").glob("*.jsonl"))
BANKING = ROOT / "sample_sessions" / "banking.jsonl"
"""The newcomer's sample: goldens and a judge's verdicts, nobody's labels."""
TEAM_BANKING = ROOT / "sample_sessions" / "team" / "banking.jsonl"
"""The same goldens labelled by two people, sample-reviewer and second-reviewer."""


P = TypeVar("P", bound=str | Path)


def banking_file(path: P, *, people: Container[str] = ("sample-reviewer",)) -> P:
    """A session at ``path`` (a file or a PostgreSQL URL) holding the banking sample, its
    judge and these people's labels."""
    records = [dataclasses.replace(g, human_labels={k: v for k, v in g.human_labels.items()
                                                    if k in people})
               for g in read_goldens(TEAM_BANKING)]
    with Session(path) as s:
        s.import_goldens(records, path=str(TEAM_BANKING))
    return path


def second_opinion(session: Session, who: str, disagree: Container[int]) -> None:
    """``who`` labels every chunk as 'sample-reviewer' did, except the ``disagree`` chunks."""
    for chunk_id, label in session.labels("sample-reviewer").items():
        assert label.verdict is not None
        flip = chunk_id in disagree
        session.decide(who, chunk_id, flipped(label.verdict) if flip else label.verdict, "set")


def write_lines(path: Path, objects: list[Any]) -> Path:
    """Write objects as JSONL (a str item is written as the raw line)."""
    lines = [o if isinstance(o, str) else json.dumps(o, ensure_ascii=False) for o in objects]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def golden(**overrides: Any) -> dict[str, Any]:
    """A valid golden object, with fields overridden."""
    obj: dict[str, Any] = {
        "id": "g1",
        "user_input": "What is the minimum balance?",
        "reference": "₹10,000 in urban branches.",
        "retrieved_contexts": ["Minimum balance is ₹10,000.", "KYC every 8 years.", "Rural ₹2,500."],
    }
    obj.update(overrides)
    return {k: v for k, v in obj.items() if v is not ...}


def dump(session_path: str | Path) -> list[str]:
    """Every row of a session as SQL text (a database's: each row as text, table by table), to
    compare a session before and after."""
    import sqlite3

    from annotator.place import is_url

    if is_url(session_path):
        from annotator.store.transfer import layout

        with Session(session_path, create=False) as session:
            return [f"{table}: {tuple(row)}" for table, _ in layout()
                    for row in session.conn.execute(f'SELECT * FROM "{table}" ORDER BY 1')]
    conn = sqlite3.connect(session_path)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


@pytest.fixture
def session_path(tmp_path: Path) -> Path:
    return tmp_path / "session.db"


STORES = ("sqlite", "postgresql")
_databases = itertools.count(1)


@pytest.fixture(scope="session")
def pg() -> Iterator[Any]:
    """A PostgreSQL server of the tests' own (tests/pg_server.py), started on first use."""
    from tests import pg_server

    with pg_server.running() as server:
        yield server


@pytest.fixture(params=STORES)
def place(request: pytest.FixtureRequest, tmp_path: Path) -> str | Path:
    """Where a new session goes: a file, then an empty PostgreSQL database (each test that
    takes a ``session`` or ``banking`` runs on both stores)."""
    if request.param == "sqlite":
        return tmp_path / "session.db"
    server = request.getfixturevalue("pg")
    return str(server.create_database(f"store{next(_databases)}"))


@pytest.fixture
def session(place: str | Path) -> Iterator[Session]:
    with Session(place) as s:
        yield s


@pytest.fixture
def banking(place: str | Path) -> Iterator[Session]:
    """A session holding the banking sample, on each store."""
    with Session(banking_file(place)) as s:
        yield s


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--approve", action="store_true",
                     help="Write the approved documents (tests/approved/) from this run's "
                          "output instead of comparing with them.")


def pytest_configure(config: pytest.Config) -> None:
    # A shell that starts the suite in the background (`scripts/test.sh &`, some CI runners)
    # makes it ignore SIGINT, and every process a test starts inherits that: the tool would
    # never see the Ctrl-C a test sends it, and the test would wait in vain. The tests' own
    # processes get the default, as a person's terminal gives them.
    import signal

    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
