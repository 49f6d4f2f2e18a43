"""Goldens into a session in one transaction: the importer behind Session.import_goldens.

It batches rows for executemany (a million chunks import in seconds), checks every golden,
verdict and label against what the session holds, and says which file and line conflict.
Like Session, it is storage code: the SQL here is the store's own.
"""

from __future__ import annotations

import json
from itertools import repeat
from typing import TYPE_CHECKING, Any

from annotator.errors import InputError
from annotator.models import (
    CheckRecord,
    GoldenRecord,
    ImportSummary,
    Judge,
    JudgeVerdict,
)
from annotator.store import bulk
from annotator.verdict import Answer, kind_of, stored, stored_from

if TYPE_CHECKING:
    from annotator.store.session import Session

_METADATA = json.JSONEncoder(ensure_ascii=False)
"""A golden's metadata as stored (made once: json.dumps with options makes one every call)."""


class Importer:
    """The state of one file's import, inside the session's open write transaction."""

    def __init__(self, session: Session, path: str, replace: bool, stamp: str) -> None:
        self.session = session
        self.conn = session.conn
        self.path = path
        self.replace = replace
        self.next_position = int(session._scalar("SELECT coalesce(max(position), 0) + 1 "
                                                 "FROM goldens"))
        # Chunk ids are assigned here so verdicts and labels can be batched with them;
        # safe because this transaction holds the write lock.
        self.next_chunk_id = int(session._scalar("SELECT coalesce(max(id), 0) + 1 FROM chunks"))
        self.known_judges = {row[0] for row in self.conn.execute("SELECT name FROM judges")}
        self.epochs: dict[str, str] = {}
        """Judge -> the epoch its imported verdicts are stored under (its configured model's,
        no fingerprint: nothing says what served them)."""
        self.touched: set[tuple[str, str]] = set()
        # Into a session without goldens no golden needs looking up, and the secondary indexes
        # are built once after the bulk load rather than kept up row by row (the transaction
        # puts them back if the import fails).
        self.fresh = self.next_position == 1
        self.indexes = (bulk.drop_indexes(self.conn, ("goldens", "chunks", "verdicts", "labels"))
                        if self.fresh else [])
        self.seen: set[str] = set()
        self.goldens: list[tuple[Any, ...]] = []
        self.chunks: list[tuple[Any, ...]] = []
        self.verdicts: list[tuple[Any, ...]] = []
        self.labels: list[tuple[Any, ...]] = []
        self.gold: list[tuple[Any, ...]] = []
        self.read = self.added = self.replaced = self.verdicts_added = self.labels_added = 0
        self.stamp = stamp
        scale = session.scale()
        self.top = None if scale is None else scale.top
        """A graded session's top grade: a file's grade above it is refused."""

    def add(self, record: GoldenRecord) -> None:
        self.read += 1
        if self.top is not None:
            self._check_grades(record, self.top)
        if record.id in self.seen:
            return  # the same golden again in this file (formats checked it is identical)
        self.seen.add(record.id)
        content = record.content_sha256()
        row = None if self.fresh else self.conn.execute(
            "SELECT content_sha256, position FROM goldens WHERE id = ?", [record.id]).fetchone()
        if row is None:
            self._insert(record, content, self.next_position)
            self.next_position += 1
            self.added += 1
            if len(self.chunks) + len(self.verdicts) + len(self.labels) > 20_000:
                self.flush()
            return
        stored_content, position = row
        if stored_content != content:
            if not self.replace:
                raise InputError(
                    self.path,
                    f"the session already holds a different golden with the id '{record.id}'. "
                    "Give this golden a new id, or import with --replace to overwrite the stored "
                    "one (its labels and verdicts are dropped).",
                    line=record.line or None, field="id",
                )
            self.flush()  # the cascade below must see every row queued so far
            self.conn.execute("DELETE FROM goldens WHERE id = ?", [record.id])
            self._insert(record, content, position)
            self.replaced += 1
            return
        self._merge(record)

    def _insert(self, record: GoldenRecord, content: str, position: int) -> None:
        self.goldens.append((record.id, position, record.user_input, record.reference,
                             record.response, _METADATA.encode(record.metadata),
                             content, self.stamp))
        first, count = self.next_chunk_id, len(record.retrieved_contexts)
        chunk_ids = range(first, first + count)
        self.next_chunk_id += count
        # Rows made in comprehensions: at a million chunks, a call per row is most of the time.
        self.chunks.extend(zip(chunk_ids, repeat(record.id), range(1, count + 1),
                               record.retrieved_contexts,
                               record.retrieved_context_ids or repeat(None),
                               record.retrieved_context_scores or repeat(None)))
        stamp = self.stamp
        for judge, verdicts in record.judge_verdicts.items():
            self._ensure_judge(judge)
            epoch = self._epoch(judge)
            queued = len(self.verdicts)
            self.verdicts.extend([
                (judge, chunk_id, verdict.verdict, verdict.reason, verdict.p_relevant,
                 verdict.grade, stamp, epoch)
                for chunk_id, verdict in zip(chunk_ids, verdicts, strict=True)
                if verdict is not None])
            if len(self.verdicts) > queued:
                self.touched.add((judge, epoch))
            self.verdicts_added += len(self.verdicts) - queued
        nothing = [None] * count
        for annotator, labels in record.human_labels.items():
            notes = record.human_notes.get(annotator, nothing)
            marks = record.human_marks.get(annotator, nothing)
            for chunk_id, label, note, mark in zip(chunk_ids, labels, notes, marks, strict=True):
                if label is not None or note is not None:
                    self._queue_label(annotator, chunk_id, label, note, mark)
        for annotator, notes in record.human_notes.items():
            if annotator not in record.human_labels:
                marks = record.human_marks.get(annotator, nothing)
                for chunk_id, note, mark in zip(chunk_ids, notes, marks, strict=True):
                    if note is not None:
                        self._queue_label(annotator, chunk_id, None, note, mark)
        if record.gold_labels is not None:
            self.gold.extend((chunk_id, gold["verdict"], gold["decided_by"], gold.get("note"),
                              gold["decided_at"])
                             for chunk_id, gold in zip(chunk_ids, record.gold_labels, strict=True)
                             if gold is not None)

    def _merge(self, record: GoldenRecord) -> None:
        """Add the verdicts and labels of a golden the session already holds."""
        self.flush()
        chunk_ids = [row[0] for row in self.conn.execute(
            "SELECT id FROM chunks WHERE golden_id = ? ORDER BY rank", [record.id])]
        for judge, verdicts in record.judge_verdicts.items():
            self._ensure_judge(judge)
            stored = self.session.verdicts(judge, [record.id])
            for rank, (chunk_id, verdict) in enumerate(zip(chunk_ids, verdicts, strict=True), 1):
                if verdict is None:
                    continue
                old = stored.get(chunk_id)
                if old is None or (old.verdict, old.reason, old.p_relevant, old.grade) != (
                        verdict.verdict, verdict.reason, verdict.p_relevant, verdict.grade):
                    if old is not None and not self.replace:
                        raise self._conflict(record, f"judge '{judge}'", rank)
                    self._queue_verdict(judge, chunk_id, verdict)
        annotators = set(record.human_labels) | set(record.human_notes)
        nothing = [None] * len(chunk_ids)
        for annotator in sorted(annotators):
            stored_labels = self.session.labels(annotator, [record.id])
            labels = record.human_labels.get(annotator, nothing)
            notes = record.human_notes.get(annotator, nothing)
            marks = record.human_marks.get(annotator, nothing)
            for rank, (chunk_id, label, note, mark) in enumerate(
                    zip(chunk_ids, labels, notes, marks, strict=True), 1):
                if label is None and note is None:
                    continue
                old_label = stored_labels.get(chunk_id)
                if old_label is None:
                    self._queue_label(annotator, chunk_id, label, note, mark)
                elif (old_label.answer, old_label.note, old_label.grade) != (
                        label, note, (mark or {}).get("grade")):
                    if not self.replace:
                        raise self._conflict(record, f"annotator '{annotator}'", rank)
                    self.conn.execute("DELETE FROM labels WHERE annotator = ? AND chunk_id = ?",
                                      (annotator, chunk_id))
                    self._queue_label(annotator, chunk_id, label, note, mark)
        if record.gold_labels is not None:
            stored_gold = dict(self.conn.execute(
                f"SELECT chunk_id, verdict FROM gold_labels WHERE chunk_id IN "
                f"({','.join('?' * len(chunk_ids))})", chunk_ids).fetchall())
            for rank, (chunk_id, gold) in enumerate(zip(chunk_ids, record.gold_labels,
                                                        strict=True), 1):
                if gold is None or stored_gold.get(chunk_id) == gold["verdict"]:
                    continue
                if chunk_id in stored_gold and not self.replace:
                    raise self._conflict(record, "the gold labels", rank)
                self.conn.execute("DELETE FROM gold_labels WHERE chunk_id = ?", [chunk_id])
                self.gold.append((chunk_id, gold["verdict"], gold["decided_by"], gold.get("note"),
                                  gold["decided_at"]))
        self.flush()

    def add_check(self, check: CheckRecord) -> None:
        """Keep an attention check (once per source and golden) and every answer on it; an
        answer the session holds differently is a conflict unless the import replaces."""
        self.flush()
        record = json.dumps(check.record, ensure_ascii=False)  # as Session.add_checks keeps it
        self.conn.execute("INSERT OR IGNORE INTO checks(source, golden_id, record, created_at) "
                          "VALUES (?, ?, ?, ?)", (check.source, check.golden_id, record,
                                                  check.created_at))
        check_id = self.conn.execute("SELECT id FROM checks WHERE source = ? AND golden_id = ?",
                                     (check.source, check.golden_id)).fetchone()[0]
        for annotator, answers in check.answers.items():
            for rank, answer in enumerate(answers, 1):
                if answer is None:
                    continue
                row = (answer.get("truth"),
                       stored_from(answer.get("answer"), answer.get("unsure", False),
                                   answer.get("distractor", False)),
                       answer.get("shown_verdict"), answer.get("note"), answer["answered_at"])
                stored = self.conn.execute(
                    "SELECT truth, answer, shown_verdict, note, answered_at FROM "
                    "check_answers WHERE annotator = ? AND check_id = ? AND rank = ?",
                    (annotator, check_id, rank)).fetchone()
                if stored == row:
                    continue
                if stored is not None and not self.replace:
                    raise InputError(self.path, f"the session already holds a different answer "
                                     f"from '{annotator}' on rank {rank} of the attention check "
                                     f"'{check.golden_id}'. Import with --replace to overwrite "
                                     "it.", line=check.line or None, field="check_answers")
                self.conn.execute(
                    "INSERT OR REPLACE INTO check_answers(annotator, check_id, rank, truth, answer, "
                    "shown_verdict, note, answered_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (annotator, check_id, rank, *row))

    def _check_grades(self, record: GoldenRecord, top: int) -> None:
        """Refuse a grade past the session's scale, naming the line, the field and the value."""
        found = [(f"judge_verdicts.{name}", rank, v.grade)
                 for name, said in record.judge_verdicts.items()
                 for rank, v in enumerate(said, 1) if v is not None and v.grade is not None]
        found += [(f"human_marks.{name}", rank, m["grade"])
                  for name, marks in record.human_marks.items()
                  for rank, m in enumerate(marks, 1) if m is not None and "grade" in m]
        for where, rank, grade in found:
            if grade > top:
                raise InputError(self.path, f"the grade {grade} at rank {rank} of golden "
                                 f"'{record.id}' is outside the session's scale (0 to {top}).",
                                 line=record.line or None, field=where)

    def _conflict(self, record: GoldenRecord, who: str, rank: int) -> InputError:
        return InputError(
            self.path,
            f"the session already holds a different verdict or label from {who} on rank {rank} "
            f"of golden '{record.id}'. Import with --replace to overwrite it, or leave it out of "
            "the file.",
            line=record.line or None,
        )

    def _ensure_judge(self, name: str) -> None:
        if name not in self.known_judges:
            self.session._define_judge(Judge(name, None, None, "imported", None, {}))
            self.known_judges.add(name)

    def _epoch(self, judge: str) -> str:
        """The epoch of the judge's imported verdicts, its row stored the first time."""
        epoch = self.epochs.get(judge)
        if epoch is None:
            epoch = self.epochs[judge] = self.session.epoch_for(judge, None, None)
            self.conn.execute("INSERT OR IGNORE INTO epochs(judge, epoch, model, endpoint, "
                              "first_at) SELECT name, ?, model, base_url, ? FROM judges "
                              "WHERE name = ?", [epoch, self.stamp, judge])
        return epoch

    def _queue_verdict(self, judge: str, chunk_id: int, verdict: JudgeVerdict) -> None:
        epoch = self._epoch(judge)
        self.verdicts.append((judge, chunk_id, verdict.verdict, verdict.reason,
                              verdict.p_relevant, verdict.grade, self.stamp, epoch))
        self.touched.add((judge, epoch))
        self.verdicts_added += 1

    def _queue_label(self, annotator: str, chunk_id: int, label: Answer | None,
                     note: str | None, mark: dict[str, Any] | None) -> None:
        word = stored(label)
        if mark is None:  # a label from a plain goldens file: imported, now
            verdict = None if label is None else kind_of(label).verdict
            imported = None if verdict is None else "import"
            self.labels.append((annotator, chunk_id, word, imported, note, self.stamp,
                                self.stamp, None, None, None, 0, None, None, None))
        else:  # a session's own export: the label as it was made
            get = mark.get
            self.labels.append((annotator, chunk_id, word, get("action"), note,
                                get("created_at", self.stamp), get("updated_at", self.stamp),
                                get("judge"), get("shown_verdict"), get("blind_verdict"),
                                int(get("reason_wrong", False)), get("decision_ms"),
                                get("grade"), get("guideline")))
        if label is not None:
            self.labels_added += 1

    def flush(self) -> None:
        """Write every queued row."""
        execute = self.conn.executemany
        if self.goldens:
            execute("INSERT INTO goldens(id, position, user_input, reference, response, metadata, "
                    "content_sha256, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", self.goldens)
        if self.chunks:
            execute("INSERT INTO chunks(id, golden_id, rank, text, doc_id, score) "
                    "VALUES (?, ?, ?, ?, ?, ?)", self.chunks)
        if self.verdicts:
            execute("INSERT INTO verdicts(judge, chunk_id, verdict, reason, p_relevant, grade, "
                    "created_at, epoch) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", self.verdicts)
            # The newest verdict of each epoch written to: the last row, whose id is above
            # every one before (what makes an epoch the latest is only its order).
            newest = self.conn.execute("SELECT last_insert_rowid()").fetchone()[0]
            execute("UPDATE epochs SET last_id = ? WHERE judge = ? AND epoch = ?",
                    [(newest, judge, epoch) for judge, epoch in self.touched])
            self.touched = set()
        if self.labels:
            execute("INSERT INTO labels(annotator, chunk_id, answer, action, note, "
                    "created_at, updated_at, judge, shown_verdict, blind_verdict, reason_wrong, "
                    "decision_ms, grade, guideline) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    self.labels)
        if self.gold:
            execute("INSERT INTO gold_labels(chunk_id, verdict, decided_by, note, decided_at) "
                    "VALUES (?, ?, ?, ?, ?)", self.gold)
        self.goldens, self.chunks, self.verdicts, self.labels, self.gold = [], [], [], [], []

    def finish(self) -> None:
        """Write what is queued, and build the indexes a fresh load went without."""
        self.flush()
        bulk.build_indexes(self.conn, self.indexes)
        self.indexes = []

    def summary(self) -> ImportSummary:
        return ImportSummary(self.path, self.read, self.added, self.replaced,
                             self.verdicts_added, self.labels_added)


