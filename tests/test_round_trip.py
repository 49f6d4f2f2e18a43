"""The session JSONL loses nothing a person marked: every stored column of a chunk, a label, a
judge's verdict, a gold label and an attention-check answer survives export -> import -> export.

The test walks the schema itself, so a column added later fails here until the JSONL carries
it or NOT_CARRIED says why it need not.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from annotator.cli import cli
from annotator.scoring import checks
from annotator.store.session import Session
from tests.conftest import write_lines

NOT_CARRIED: dict[str, dict[str, str]] = {
    "chunks": {"id": "renumbered; the key is (golden, rank)"},
    "labels": {"id": "a row number", "chunk_id": "renumbered; the key is (golden, rank)"},
    "gold_labels": {"chunk_id": "renumbered; the key is (golden, rank)"},
    "check_answers": {"id": "a row number", "check_id": "renumbered; the key is (source, golden)"},
    "verdicts": {
        "id": "a row number", "chunk_id": "renumbered; the key is (golden, rank)",
        # What a call cost and how it went: the JSONL holds each judge's verdict in force, not
        # its calls ('annotator copy' keeps those).
        **dict.fromkeys(("error", "raw_reply", "tokens_in", "tokens_out", "tokens_cached",
                         "latency_ms", "request_sha256", "created_at", "repetition",
                         "confidence_note", "requests", "unstable", "batch_id"),
                        "a call's record, not the verdict"),
    },
}
"""Columns the session JSONL does not carry, each with the reason."""

KEYS = {
    "chunks": "SELECT t.golden_id, t.rank, t.* FROM chunks t",
    "labels": ("SELECT c.golden_id, c.rank, t.annotator, t.* FROM labels t "
               "JOIN chunks c ON c.id = t.chunk_id"),
    "gold_labels": ("SELECT c.golden_id, c.rank, t.* FROM gold_labels t "
                    "JOIN chunks c ON c.id = t.chunk_id"),
    "verdicts": ("SELECT c.golden_id, c.rank, t.judge, t.* FROM verdicts t "
                 "JOIN chunks c ON c.id = t.chunk_id WHERE t.error IS NULL AND t.repetition = 1"),
    "check_answers": ("SELECT k.source, k.golden_id, t.annotator, t.rank, t.* FROM check_answers t "
                      "JOIN checks k ON k.id = t.check_id"),
}
"""Each table's rows keyed by what survives renumbering (the first columns of each row)."""


def table(db: Path, name: str) -> dict[tuple[Any, ...], dict[str, Any]]:
    """Key -> the row's carried columns, for one table of a session file."""
    with sqlite3.connect(db) as conn:
        conn.row_factory = sqlite3.Row
        columns = [row["name"] for row in conn.execute(f"PRAGMA table_info({name})")]
        keys = {"check_answers": 4, "gold_labels": 2, "chunks": 2}.get(name, 3)
        out = {}
        for row in conn.execute(KEYS[name]):
            values = tuple(row)
            out[values[:keys]] = {c: row[c] for c in columns if c not in NOT_CARRIED[name]}
        return out


def make_team_session(tmp_path: Path) -> Path:
    """A session holding every kind of mark: accepted, flipped, blind, unsure, reason wrong,
    comments, a note alone, gold labels, graded verdicts with P(relevant), checks answered."""
    goldens = [{"id": f"g{i}", "user_input": f"question {i} [b]?", "reference": f"answer {i}",
                "retrieved_contexts": [f"chunk {i}.{r} 😀 عربى" for r in range(1, 4)],
                # The team's own document ids and the retriever's scores (one chunk without).
                "retrieved_context_ids": [f"doc-{i}{r}" if r < 3 else None for r in range(1, 4)],
                "retrieved_context_scores": [1.5 / r for r in range(1, 4)],
                "judge": "grader", "judge_verdicts": [
                    {"verdict": r % 2, "reason": f"why {r}", "p_relevant": 0.25 * r,
                     "grade": 3 * (r % 2)} for r in range(1, 4)]}
               for i in range(1, 5)]
    source = write_lines(tmp_path / "goldens.jsonl", goldens)
    db = tmp_path / "team.db"
    assert CliRunner().invoke(cli, ["import", str(source), "--session", str(db)]).exit_code == 0
    with Session(db) as session:
        ids = session.chunk_ids()
        g1, g2, g3 = ids["g1"], ids["g2"], ids["g3"]
        verdicts = session.verdicts("grader")

        def shown(chunk: int) -> int:
            return verdicts[chunk].verdict

        session.set_guidelines("Useful: it states the fact.", source="g.md", by="lead")
        session.read_guidelines("alice", 1)  # alice's labels record version 1, bob's none
        session.decide("alice", g1[0], shown(g1[0]), "accept", judge="grader",
                       shown_verdict=shown(g1[0]), decision_ms=812.5, reason_wrong=True,
                       note="the reason cites the wrong clause")
        session.decide("alice", g1[1], 1 - shown(g1[1]), "flip", judge="grader",
                       shown_verdict=shown(g1[1]), decision_ms=1200.0)
        session.decide("alice", g1[2], "unsure", None, judge="grader",
                       note="cannot tell from the excerpt")
        session.decide("bob", g1[0], 1, "set", judge="grader", blind_verdict=1, decision_ms=3.0,
                       grade=2)
        session.decide("bob", g1[1], shown(g1[1]), "accept", judge="grader",
                       shown_verdict=shown(g1[1]))
        session.set_note("bob", g2[0], "only a note here")
        for chunk in g3:
            session.decide("bob", chunk, shown(chunk), "accept", judge="grader",
                           shown_verdict=shown(chunk))
        session.set_gold(g1[1], 1, "carol", "settled in the weekly review")
        session.set_gold(g1[2], 0, "carol")
        session.add_checks(checks.GOLD, checks.from_gold(session))
        [(check_id, _, _, record)] = session.checks()
        session.answer_check("alice", check_id, 2, truth=record["truth"][1], answer=1,
                             shown_verdict=1, note="looked right")
        session.answer_check("bob", check_id, 3, truth=record["truth"][2], answer="unsure",
                             note="a check I could not tell")
    return db


def export(db: Path, out: Path) -> bytes:
    result = CliRunner().invoke(cli, ["export", str(db), "--format", "jsonl", "--output", str(out)])
    assert result.exit_code == 0, result.output
    return out.read_bytes()


def test_every_mark_survives_export_import_export(tmp_path: Path) -> None:
    first_db = make_team_session(tmp_path)
    first = export(first_db, tmp_path / "first.jsonl")
    again_db = tmp_path / "again.db"
    result = CliRunner().invoke(cli, ["import", str(tmp_path / "first.jsonl"), "--session",
                                      str(again_db)])
    assert result.exit_code == 0, result.output
    assert export(again_db, tmp_path / "again.jsonl") == first  # byte for byte

    for name in NOT_CARRIED:
        with sqlite3.connect(first_db) as conn:
            stored = {row[1] for row in conn.execute(f"PRAGMA table_info({name})")}
        assert set(NOT_CARRIED[name]) <= stored, f"{name}: NOT_CARRIED names a column it lacks"
        before, after = table(first_db, name), table(again_db, name)
        assert before, f"the team session has no {name} to carry"
        assert after == before, name
        for column in stored - set(NOT_CARRIED[name]):
            # Every carried column is exercised: some row holds a value that is not its default.
            assert any(row[column] not in (None, 0, "") for row in before.values()), \
                f"{name}.{column} is never set in the team session, so nothing tests it"


def test_importing_the_export_twice_changes_nothing_and_a_changed_mark_is_a_conflict(
        tmp_path: Path) -> None:
    db = make_team_session(tmp_path)
    exported = tmp_path / "team.jsonl"
    export(db, exported)
    again = CliRunner().invoke(cli, ["import", str(exported), "--session", str(db)])
    assert again.exit_code == 0 and "nothing changed" in again.output, again.output
    lines = exported.read_text(encoding="utf-8").splitlines()
    check_line = next(n for n, line in enumerate(lines, 1) if '"attention_check"' in line)
    changed = lines[check_line - 1].replace('"answer": 1', '"answer": 0')
    edited = tmp_path / "edited.jsonl"
    edited.write_text("\n".join([*lines[:check_line - 1], changed]) + "\n", encoding="utf-8")
    before = export(db, tmp_path / "before.jsonl")
    refused = CliRunner().invoke(cli, ["import", str(edited), "--session", str(db)])
    assert refused.exit_code == 2, refused.output
    assert f"line {check_line}" in refused.output and "check_answers" in refused.output
    assert export(db, tmp_path / "after.jsonl") == before  # nothing half-imported


def test_malformed_marks_name_the_line_and_field(tmp_path: Path) -> None:
    base = {"id": "g", "user_input": "q", "reference": "a", "retrieved_contexts": ["x", "y"],
            "human_labels": {"alice": [1, None]}}
    cases: list[tuple[dict[str, Any], str]] = [
        ({"human_marks": {"alice": [{"reason_wrong": "yes"}, None]}}, "human_marks.alice"),
        ({"human_marks": {"alice": [None, {"action": "accept"}]}}, "human_marks.alice"),
        ({"human_marks": {"bob": [{"action": "flip"}, None]}}, "human_marks.bob"),
        ({"gold_labels": [{"verdict": 2, "decided_by": "c", "decided_at": "t"}, None]},
         "gold_labels"),
        ({"gold_labels": [{"verdict": 1}, None]}, "gold_labels"),
        ({"judge": "j", "judge_verdicts": [{"verdict": 1, "grade": -1}, None]}, "judge_verdicts"),
    ]
    db = tmp_path / "s.db"
    for extra, field in cases:
        path = write_lines(tmp_path / "bad.jsonl", [{**base, **extra}])
        result = CliRunner().invoke(cli, ["import", str(path), "--session", str(db)])
        assert result.exit_code == 2, (extra, result.output)
        assert "line 1" in result.output and field in result.output, (extra, result.output)
        assert not db.exists()  # a failed import leaves no file behind
