"""One screen a name on a session: a second `annotate` under a name already open is refused
with the sentence `serve` uses; another name opens beside it; a killed screen frees its name."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from annotator.errors import AnnotatorError
from annotator.people.presence import ScreenInUse, is_open, one_screen
from tests.conftest import banking_file
from tests.terminal import Terminal

OPEN = rb"savings-min-balance"
"""Shown once the screen has painted the first golden."""


def test_two_screens_under_one_name_one_is_refused_and_a_killed_one_frees_it(
        place: str | Path) -> None:
    db = str(banking_file(place, people=()))  # a database: the lock holds across hosts
    with Terminal(["annotate", db, "--annotator", "alice"]) as first:
        first.wait_for(OPEN)
        with Terminal(["annotate", db, "--annotator", "alice"]) as second:
            assert second.finish() == 2
            text = second.seen.decode(errors="replace")
            assert "alice already has the annotation screen open" in text
            assert f"process {first.process.pid}" in text
            assert "Traceback" not in text
        with Terminal(["annotate", db, "--annotator", "bob"]) as other:  # another name: fine
            other.wait_for(OPEN)
            other.press("q")
            assert other.finish() == 0
        first.process.send_signal(signal.SIGKILL)
        first.process.wait(timeout=30)
    with Terminal(["annotate", db, "--annotator", "alice"]) as again:  # the name is free again
        again.wait_for(OPEN)
        again.press("q")
        assert again.finish() == 0


def test_the_lock_follows_the_file_not_its_spelling_and_roles_are_apart(tmp_path: Path) -> None:
    db = banking_file(tmp_path / "banking.db", people=())
    link = tmp_path / "link.db"
    link.symlink_to(db)
    with one_screen(db, "alice"):
        assert is_open(link, "alice")  # another spelling of the same file
        assert not is_open(db, "bob")
        assert not is_open(db, "alice", "adjudicate")
        with pytest.raises(ScreenInUse) as refused, one_screen(link, "alice"):
            pass
        assert isinstance(refused.value, AnnotatorError)
    assert not is_open(db, "alice")
