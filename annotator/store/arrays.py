"""Whole-session reads as numpy arrays (annotator.columns): one query each, no object per row.

Behind ``Session.chunk_frame``, ``judge_columns``, ``label_columns`` and ``gold_column``, and
imported by them on first use: a command that only imports goldens, or opens the annotation
screen, never loads numpy (a fifth of a second of start-up on this machine).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from annotator.columns import ACTION_CODES, MISSING, ChunkFrame, JudgeColumns, LabelColumns
from annotator.verdict import code_sql

if TYPE_CHECKING:
    from annotator.store.session import Session


def chunk_frame(session: Session, golden_ids: Sequence[str] | None) -> ChunkFrame:
    """See ``Session.chunk_frame``."""
    conn = session.conn
    if golden_ids is not None:
        order = {g: i for i, g in enumerate(golden_ids)}
        found = sorted(conn.execute(
            f"SELECT c.golden_id, c.id, c.rank FROM chunks c WHERE c.golden_id IN "
            f"({','.join('?' * len(golden_ids))})", list(golden_ids)),
            key=lambda row: (order[row[0]], row[2]))
        present = sorted({row[0] for row in found}, key=order.__getitem__)
        index = {g: i for i, g in enumerate(present)}
        return ChunkFrame.of(present, np.asarray(
            [(index[g], c, r) for g, c, r in found], dtype=np.int64).reshape(-1, 3))
    every = session.golden_ids()
    # Positions need not be 0..n-1 (a merge or a replaced golden leaves gaps): number them.
    rows = np.fromiter(conn.execute(
        "SELECT g.position, c.id, c.rank FROM goldens g JOIN chunks c ON c.golden_id = g.id "
        "ORDER BY g.position, c.rank"), dtype=np.dtype((np.int64, 3)))
    if len(rows):
        starts = np.flatnonzero(np.diff(rows[:, 0], prepend=rows[0, 0] - 1))
        rows[:, 0] = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, len(rows))))
    return ChunkFrame.of(every, rows)


def _frame_filter(frame: ChunkFrame, whole: bool) -> tuple[str, list[Any]]:
    """SQL limiting a read to the frame's goldens (nothing for a whole-session frame)."""
    if whole:
        return "", []
    return (f"AND chunk_id IN (SELECT c.id FROM chunks c WHERE c.golden_id IN "
            f"({','.join('?' * len(frame.golden_ids))}))", list(frame.golden_ids))


def _verdict_sql(relevant_from: int | None) -> str:
    """A row's verdict: as stored, or with ``relevant_from`` its grade read through that
    threshold where it has a grade (a report asking for another threshold than the
    session's)."""
    if relevant_from is None:
        return "verdict"
    return f"CASE WHEN grade IS NULL THEN verdict ELSE grade >= {int(relevant_from)} END"


def judge_columns(session: Session, judge: str, frame: ChunkFrame, whole: bool,
                  relevant_from: int | None = None) -> JudgeColumns:
    """See ``Session.judge_columns``."""
    where, params = _frame_filter(frame, whole)
    rows = np.fromiter(session.conn.execute(
        f"""SELECT chunk_id, {_verdict_sql(relevant_from)}, coalesce(p_relevant, 'nan'),
                   coalesce(grade, -1), max(id) FROM verdicts
           WHERE judge = ? AND error IS NULL AND repetition = 1 AND epoch IS ? {where}
           GROUP BY chunk_id""",
        [judge, session.epoch_in_use(judge), *params]),
        dtype=[("chunk", np.int64), ("verdict", np.int8), ("p", float), ("grade", np.int8),
               ("id", np.int64)])
    at = frame.slots(rows["chunk"])
    return JudgeColumns(frame.aligned(at, rows["verdict"], MISSING, np.int8),
                        frame.aligned(at, rows["p"], np.nan, float),
                        frame.aligned(at, rows["grade"], MISSING, np.int8))


def label_columns(session: Session, annotator: str, frame: ChunkFrame, whole: bool,
                  relevant_from: int | None = None) -> LabelColumns:
    """See ``Session.label_columns``."""
    where, params = _frame_filter(frame, whole)
    codes = " ".join(f"WHEN '{a}' THEN {i}" for i, a in enumerate(ACTION_CODES))
    rows = np.fromiter(session.conn.execute(
        f"""SELECT chunk_id, coalesce({_verdict_sql(relevant_from)}, -1),
                   coalesce(blind_verdict, -1),
                   coalesce(shown_verdict, -1), CASE action {codes} ELSE -1 END,
                   coalesce(decision_ms, 'nan'), note IS NOT NULL AND note != '',
                   {code_sql("answer")}, reason_wrong, coalesce(grade, -1),
                   coalesce(guideline, -1)
            FROM labels WHERE annotator = ? {where} ORDER BY updated_at, chunk_id""",
        [annotator, *params]), dtype=[("chunk", np.int64), ("verdict", np.int8),
                                      ("blind", np.int8), ("shown", np.int8),
                                      ("action", np.int8), ("ms", float), ("note", bool),
                                      ("answer", np.int8), ("reason_wrong", bool),
                                      ("grade", np.int8), ("guideline", np.int32)])
    order = frame.slots(rows["chunk"])

    def place(name: str, fill: float, dtype: type | np.dtype) -> np.ndarray:
        return frame.aligned(order, rows[name], fill, dtype)

    return LabelColumns(place("verdict", MISSING, np.int8), place("blind", MISSING, np.int8),
                        place("shown", MISSING, np.int8), place("action", MISSING, np.int8),
                        place("ms", np.nan, float), place("note", False, bool),
                        place("answer", MISSING, np.int8), place("reason_wrong", False, bool),
                        order[order != MISSING], place("grade", MISSING, np.int8),
                        place("guideline", MISSING, np.int32))


def gold_column(session: Session, frame: ChunkFrame) -> np.ndarray:
    """See ``Session.gold_column``."""
    rows = np.fromiter(session.conn.execute("SELECT chunk_id, verdict FROM gold_labels"),
                       dtype=np.dtype((np.int64, 2)))
    return frame.aligned(frame.slots(rows[:, 0]), rows[:, 1].astype(np.int8), MISSING,
                         np.int8)


def chunk_columns(session: Session, judges: Sequence[str], annotators: Sequence[str]
                  ) -> dict[str, list[Any]]:
    """See ``Session.chunk_columns``."""
    from annotator.verdict import KINDS

    conn = session.conn
    rows = conn.execute(
        "SELECT c.id, g.id, c.rank, g.user_input, c.text, c.doc_id, c.score FROM goldens g "
        "JOIN chunks c ON c.golden_id = g.id ORDER BY g.position, c.rank").fetchall()
    n = len(rows)
    chunk_ids, golden_ids, ranks, questions, texts, doc_ids, scores = (
        [list(column) for column in zip(*rows, strict=True)] if n else [[] for _ in range(7)])
    del rows
    ids = np.asarray(chunk_ids, dtype=np.int64)
    where = np.full(int(ids.max()) + 1 if n else 0, MISSING, dtype=np.int64)
    where[ids] = np.arange(n)
    # Each chunk's golden as a number (a golden's chunks come together, in order).
    golden = np.cumsum([False, *(a != b for a, b in itertools.pairwise(golden_ids))],
                       dtype=np.int64) if n else np.zeros(0, dtype=np.int64)
    goldens = int(golden[-1]) + 1 if n else 0
    out: dict[str, list[Any]] = {
        "golden_id": golden_ids, "rank": ranks, "question": questions, "chunk": texts,
        "doc_id": doc_ids, "score": scores}

    def placed(found: list[tuple[Any, ...]], width: int) -> list[np.ndarray]:
        """Each item after the chunk id (the first) of ``found``'s rows as a column of
        objects on the chunks' rows, None where a chunk has no row."""
        columns = [np.full(n, None, dtype=object) for _ in range(width)]
        if found:
            items = list(zip(*found, strict=True))
            at = where[np.asarray(items[0], dtype=np.int64)]
            for column, values in zip(columns, items[1:], strict=False):
                column[at] = np.asarray(values, dtype=object)
        return columns

    for judge in judges:
        verdict, reason, p = placed(conn.execute(
            "SELECT chunk_id, verdict, reason, p_relevant, max(id) FROM verdicts WHERE judge = ? "
            "AND error IS NULL AND repetition = 1 AND epoch IS ? GROUP BY chunk_id",
            [judge, session.epoch_in_use(judge)]).fetchall(), 3)
        out[f"verdict:{judge}"] = verdict.tolist()
        out[f"reason:{judge}"] = reason.tolist()
        out[f"p_relevant:{judge}"] = p.tolist()
    for person in annotators:
        verdict, word, note = placed(conn.execute(
            "SELECT chunk_id, verdict, answer, note FROM labels WHERE annotator = ?",
            [person]).fetchall(), 3)
        answer = verdict.copy()
        for kind in KINDS:  # a kind that is more than its verdict (unsure, distractor)
            if kind.answer != kind.verdict:
                answer[word == kind.word] = kind.answer
        # A golden's notes are given only where one of its chunks has a note (as the session
        # JSONL has them): elsewhere every note of that golden is None.
        has = np.fromiter((bool(x) for x in note), dtype=bool, count=n)
        noted = np.bincount(golden[has], minlength=goldens) > 0
        note[~noted[golden]] = None
        out[f"label:{person}"] = answer.tolist()
        out[f"note:{person}"] = note.tolist()
    return out
