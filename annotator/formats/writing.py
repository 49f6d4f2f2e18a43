"""Writing goldens: session JSONL (every column of a label, a verdict and a check answer), the
goldens CSV and the chunk table, text kept as data (never a formula in a CSV cell).
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import IO, Any

from annotator.formats.validation import CHECK_FIELD, CSV_JSON_COLUMNS
from annotator.models import (
    CheckRecord,
    GoldenRecord,
    JudgeVerdict,
)
from annotator.text import visible


def golden_to_object(record: GoldenRecord) -> dict[str, Any]:
    """The session-JSONL object of a golden: the input format, with every judge and label."""
    obj: dict[str, Any] = {"id": record.id, "user_input": record.user_input}
    if record.reference is not None:
        obj["reference"] = record.reference
    if record.response is not None:
        obj["response"] = record.response
    obj["retrieved_contexts"] = record.retrieved_contexts
    if record.retrieved_context_ids is not None:
        obj["retrieved_context_ids"] = record.retrieved_context_ids
    if record.retrieved_context_scores is not None:
        obj["retrieved_context_scores"] = record.retrieved_context_scores
    if len(record.judge_verdicts) == 1:
        [(name, verdicts)] = record.judge_verdicts.items()
        obj["judge"] = name
        obj["judge_verdicts"] = [_verdict_object(v) for v in verdicts]
    elif record.judge_verdicts:
        obj["judges"] = {
            name: [_verdict_object(v) for v in verdicts]
            for name, verdicts in sorted(record.judge_verdicts.items())
        }
    if record.human_labels:
        obj["human_labels"] = dict(sorted(record.human_labels.items()))
    if record.human_notes:
        obj["human_notes"] = dict(sorted(record.human_notes.items()))
    if record.human_marks:
        obj["human_marks"] = dict(sorted(record.human_marks.items()))
    if record.gold_labels is not None:
        obj["gold_labels"] = record.gold_labels
    if record.metadata:
        obj["metadata"] = record.metadata
    return obj


def _verdict_object(verdict: JudgeVerdict | None) -> dict[str, Any] | None:
    if verdict is None:
        return None
    obj: dict[str, Any] = {"verdict": verdict.verdict, "reason": verdict.reason}
    if verdict.p_relevant is not None:
        obj["p_relevant"] = verdict.p_relevant
    if verdict.grade is not None:
        obj["grade"] = verdict.grade
    return obj


def check_to_object(check: CheckRecord) -> dict[str, Any]:
    """The session-JSONL object of an attention check, with every person's answers on it."""
    obj: dict[str, Any] = {CHECK_FIELD: {"source": check.source, "golden_id": check.golden_id,
                                         "record": check.record, "created_at": check.created_at}}
    if check.answers:
        obj["check_answers"] = dict(sorted(check.answers.items()))
    return obj


def write_jsonl(records: Iterable[GoldenRecord], out: IO[str],
                checks: Iterable[CheckRecord] = ()) -> int:
    """Write goldens as session JSONL (UTF-8, one object per line), then the attention checks;
    return how many goldens."""
    count = 0
    for record in records:
        out.write(_json_text(golden_to_object(record)))
        out.write("\n")
        count += 1
    for check in checks:
        out.write(_json_text(check_to_object(check)))
        out.write("\n")
    return count


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""What makes a spreadsheet read a cell as a formula (OWASP's CSV injection list)."""


def csv_cell(value: object) -> object:
    """A value as a CSV cell safe to open in a spreadsheet: text with a leading formula
    character gets a leading apostrophe (read back by this tool without it), and control
    characters are shown (annotator.text.visible); numbers are left as they are."""
    if not isinstance(value, str):
        return value
    text = visible(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


_UNESCAPED = re.compile(r"[\x7f-\x9f]")
"""Controls json.dumps leaves raw when it writes non-ASCII text as it is (it escapes C0)."""


def _json_text(value: Any) -> str:
    """JSON with non-ASCII text as it is but every control character escaped, DEL and C1 too
    (json.dumps escapes only C0): it reads back exactly and shows nothing a terminal obeys."""
    text = json.dumps(value, ensure_ascii=False)
    return _UNESCAPED.sub(lambda m: f"\\u{ord(m.group()):04x}", text)



def from_csv_cell(cell: str) -> str:
    """The text of a cell written by csv_cell (its protecting apostrophe dropped)."""
    return cell[1:] if cell.startswith("'") and cell[1:].startswith(FORMULA_STARTS) else cell


CSV_COLUMNS = ("id", "user_input", "reference", "response", "retrieved_contexts", "judge",
               "judge_verdicts", "judges", "human_labels", "human_notes", "metadata")


def write_csv(records: Iterable[GoldenRecord], out: IO[str]) -> int:
    """Write goldens as CSV, one row per golden, list and object columns as JSON; return how many."""
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    count = 0
    for record in records:
        obj = golden_to_object(record)
        writer.writerow({
            # A list or object column starts with [ or {: never a formula.
            column: _json_text(obj[column]) if column in CSV_JSON_COLUMNS
            else csv_cell(obj[column])
            for column in CSV_COLUMNS if column in obj
        })
        count += 1
    return count


def chunk_table(records: Iterable[GoldenRecord], judges: Sequence[str],
                annotators: Sequence[str]) -> Iterator[dict[str, Any]]:
    """One dict a chunk: golden_id, rank, question, chunk, doc_id and score (the chunk's own
    id and retrieval score, None where the file gave none); each judge's ``verdict:``,
    ``reason:`` and ``p_relevant:`` NAME; each person's ``label:`` and ``note:`` NAME (None
    where there is none)."""
    for record in records:
        for k, text in enumerate(record.retrieved_contexts):
            ids, scores = record.retrieved_context_ids, record.retrieved_context_scores
            row: dict[str, Any] = {"golden_id": record.id, "rank": k + 1,
                                   "question": record.user_input, "chunk": text,
                                   "doc_id": ids[k] if ids else None,
                                   "score": scores[k] if scores else None}
            for judge in judges:
                verdicts = record.judge_verdicts.get(judge, [])
                verdict = verdicts[k] if k < len(verdicts) else None
                row[f"verdict:{judge}"] = None if verdict is None else verdict.verdict
                row[f"reason:{judge}"] = None if verdict is None else verdict.reason
                row[f"p_relevant:{judge}"] = None if verdict is None else verdict.p_relevant
            for name in annotators:
                labels = record.human_labels.get(name, [])
                notes = record.human_notes.get(name, [])
                row[f"label:{name}"] = labels[k] if k < len(labels) else None
                row[f"note:{name}"] = notes[k] if k < len(notes) else None
            yield row


def write_chunk_csv(records: Iterable[GoldenRecord], out: IO[str], judge: str,
                    annotators: Sequence[str]) -> int:
    """Write one row per chunk: golden, rank, text, the judge's verdict and reason, and each
    annotator's label and note (chunk_table's columns for one judge); return how many rows."""
    columns = ["golden_id", "rank", "question", "chunk", "judge", "judge_verdict", "judge_reason",
               "judge_p_relevant"]
    for name in annotators:
        columns += [f"label:{name}", f"note:{name}"]
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([csv_cell(column) for column in columns])
    rows = 0
    for row in chunk_table(records, [judge], annotators):
        cells: list[object] = [row["golden_id"], row["rank"], row["question"], row["chunk"], judge,
                               row[f"verdict:{judge}"], row[f"reason:{judge}"],
                               row[f"p_relevant:{judge}"]]
        for name in annotators:
            cells += [row[f"label:{name}"], row[f"note:{name}"] or ""]
        writer.writerow([csv_cell("" if cell is None else cell) for cell in cells])
        rows += 1
    return rows
