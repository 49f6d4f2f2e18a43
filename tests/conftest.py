"""Shared fixtures: real session files in tmp_path, the bundled samples, small input writers."""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
from collections.abc import Container, Iterator
from pathlib import Path
from typing import Any

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


def banking_file(path: Path, *, people: Container[str] = ("sample-reviewer",)) -> Path:
    """A session file at ``path`` holding the banking sample, its judge and these people's labels."""
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


def dump(session_path: Path) -> list[str]:
    """Every row of a session file as SQL text, to compare a file before and after."""
    import sqlite3

    conn = sqlite3.connect(session_path)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


@pytest.fixture
def session_path(tmp_path: Path) -> Path:
    return tmp_path / "session.db"


@pytest.fixture
def session(session_path: Path) -> Iterator[Session]:
    with Session(session_path) as s:
        yield s


@pytest.fixture
def banking(tmp_path: Path) -> Iterator[Session]:
    """A session holding the banking sample."""
    with Session(banking_file(tmp_path / "banking.db")) as s:
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
