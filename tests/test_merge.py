"""Merging session files: idempotent, order-free, nothing lost, conflicts kept and reported."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from annotator.cli import cli
from annotator.errors import SessionError
from annotator.formats import read_goldens
from annotator.models import Price
from annotator.people.merge import merge_sessions
from annotator.store.session import Session
from tests.conftest import banking_file, dump, golden, write_lines


def content(path: Path) -> list[str]:
    """A file's rows, without its random session id and the times its schema was made."""
    return [line for line in dump(path)
            if "'session_id'" not in line and "_sqlite_migrations" not in line]


def person(tmp_path: Path, name: str, who: str, seed: int, *, undo: bool = False) -> Path:
    """A copy of the banking sample where one person labelled a random half of the chunks."""
    path = tmp_path / f"{name}.db"
    rng = random.Random(seed)
    with Session(banking_file(path)) as s:
        chunks = [c for ids in s.chunk_ids().values() for c in ids]
        for chunk_id in rng.sample(chunks, len(chunks) // 2):
            s.decide(who, chunk_id, rng.randint(0, 1), "set", decision_ms=rng.uniform(300, 900))
        if undo:
            s.undo(who)
        s.set_note(who, chunks[0], f"{who} was here [/b] 🙂")
    return path


def test_merge_is_order_free_and_idempotent(tmp_path: Path) -> None:
    a = person(tmp_path, "a", "alice", 1, undo=True)
    b = person(tmp_path, "b", "bob", 2)
    c = person(tmp_path, "c", "carol", 3)
    merge_sessions([a, b, c], tmp_path / "abc.db")
    merge_sessions([c, a, b], tmp_path / "cab.db")
    merge_sessions([tmp_path / "abc.db", b], tmp_path / "abc_b.db")
    merge_sessions([a, a], tmp_path / "aa.db")
    assert content(tmp_path / "abc.db") == content(tmp_path / "cab.db")
    assert content(tmp_path / "abc.db") == content(tmp_path / "abc_b.db")
    with Session(tmp_path / "abc.db") as merged, Session(a) as first, Session(tmp_path / "aa.db") as aa:
        assert merged.annotators() == ["alice", "bob", "carol", "sample-reviewer"]
        assert aa.label_conflicts() == []
        # Every person's labels and notes arrive as they were, under the same golden and rank.
        for name, path in (("alice", a), ("bob", b), ("carol", c)):
            with Session(path) as source:
                def by_place(s: Session, who: str) -> dict[tuple[str, int], tuple[object, ...]]:
                    rank = {cid: (g, r) for g, ids in s.chunk_ids().items()
                            for r, cid in enumerate(ids, 1)}
                    return {rank[cid]: (lab.verdict, lab.note, lab.action, lab.decision_ms)
                            for cid, lab in s.labels(who).items()}
                assert by_place(merged, name) == by_place(source, name)
        # The undo survives as an undo: undoing again in the team file reverts alice's
        # previous decision, not the one already undone.
        assert len(merged.events("alice")) == len(first.events("alice"))
        assert merged.undo("alice") == first.undo("alice") is not None
        assert merged.verdicts("sample-judge").keys() == first.verdicts("sample-judge").keys()
        assert merged.call_summary("sample-judge")["calls"] == 80  # one import is not two


def test_conflicting_labels_are_all_kept_and_the_newest_is_in_force(tmp_path: Path) -> None:
    a = person(tmp_path, "a", "alice", 1)
    b = tmp_path / "b.db"
    b.write_bytes(a.read_bytes())  # the same person's file, copied, then changed in one place
    with Session(a) as s:
        first = s.chunk_ids()[s.golden_ids()[2]][1]
        s.decide("alice", first, 1, "set")
    with Session(b) as s:
        s.decide("alice", first, 0, "set")  # later: this one is in force
    result = CliRunner().invoke(cli, ["merge", str(a), str(b), "-o", str(tmp_path / "t.db")])
    assert result.exit_code == 0, result.output
    assert "1 chunk labelled differently by the same person" in result.output
    assert "alice, golden" in result.output and "rank 2: 1 at" in result.output
    with Session(tmp_path / "t.db") as t:
        conflicts = t.label_conflicts()
        assert [(x["annotator"], x["rank"], x["verdict"], x["in_force"]) for x in conflicts] == [
            ("alice", 2, 1, 0), ("alice", 2, 0, 0)]
    # Merging the team file with either source again changes nothing.
    merge_sessions([tmp_path / "t.db", a], tmp_path / "t2.db")
    assert content(tmp_path / "t.db") == content(tmp_path / "t2.db")


def test_different_goldens_under_one_id_stop_the_merge_and_leave_no_file(tmp_path: Path) -> None:
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    for path, chunks in ((a, ["one", "two"]), (b, ["one", "three"])):
        source = write_lines(tmp_path / f"{path.stem}.jsonl", [golden(retrieved_contexts=chunks)])
        with Session(path) as s:
            s.import_goldens(read_goldens(source), path=str(source))
    with pytest.raises(SessionError, match="Golden 'g1' differs between"):
        merge_sessions([a, b], tmp_path / "t.db")
    assert not (tmp_path / "t.db").exists()
    result = CliRunner().invoke(cli, ["merge", str(a), str(a), "-o", str(a)])
    assert result.exit_code == 2 and "already exists" in result.output


def test_splits_and_gold_labels_travel_and_contradicting_splits_are_refused(tmp_path: Path) -> None:
    a = person(tmp_path, "a", "alice", 1)
    b = person(tmp_path, "b", "bob", 2)
    with Session(a) as s:
        ids = s.golden_ids()
        s.set_splits({g: "dev" if i % 2 else "test" for i, g in enumerate(ids)}, 7, replace=False)
        s.set_gold(s.chunk_ids()[ids[0]][0], 1, "dana", "settled by the policy text")
    merge_sessions([a, b], tmp_path / "t.db")
    with Session(tmp_path / "t.db") as t, Session(a) as s:
        assert t.splits() == s.splits()
        [gold] = t.gold_labels().values()
        assert (gold.verdict, gold.decided_by, gold.note) == (1, "dana", "settled by the policy text")
    with Session(b) as s:
        s.set_splits(dict.fromkeys(s.golden_ids(), "dev"), 8, replace=False)
    with pytest.raises(SessionError, match="split in"):
        merge_sessions([a, b], tmp_path / "t3.db")


def test_the_random_sample_and_prices_travel_and_different_samples_are_refused(
        tmp_path: Path) -> None:
    from annotator.stats.ppi import draw_sample

    a = person(tmp_path, "a", "alice", 1)
    b = person(tmp_path, "b", "bob", 2)
    for path in (a, b):
        with Session(path) as s:
            s.set_random_sample(5, 3, draw_sample(s.golden_ids(), 5, 3))
    with Session(a) as s:
        s.set_price("sample-judge", Price(0.15, 0.6, 0.075))
    merge_sessions([a, b], tmp_path / "t.db")
    with Session(tmp_path / "t.db") as t, Session(a) as s:
        assert t.random_sample() == s.random_sample()
        assert t.price("sample-judge") == Price(0.15, 0.6, 0.075)
    c = person(tmp_path, "c", "carol", 3)
    with Session(c) as s:
        s.set_random_sample(5, 4, draw_sample(s.golden_ids(), 5, 4))
    with pytest.raises(SessionError, match="different random samples"):
        merge_sessions([a, c], tmp_path / "t2.db")
    assert not (tmp_path / "t2.db").exists()
