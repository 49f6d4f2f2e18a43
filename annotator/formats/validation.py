"""Checking goldens as they come in: what a golden and an attention check may hold, field by
field, each error naming the file, the line and the field (formats/reading.py hands every line
here, whatever its file's shape).
"""

from __future__ import annotations

import json
import math
import unicodedata
from collections.abc import Callable
from itertools import repeat
from types import NoneType
from typing import TYPE_CHECKING, Any

from annotator.errors import InputError
from annotator.models import (
    GOLD_FIELDS,
    MARK_FIELDS,
    MAX_CHUNKS,
    CheckRecord,
    GoldenRecord,
    JudgeVerdict,
    stable_golden_id,
)
from annotator.text import counted
from annotator.verdict import SPOKEN, VALUES, Answer, is_answer, is_verdict, kind_of

if TYPE_CHECKING:
    from annotator.formats.reading import Notices

ALIASES = {
    "question": "user_input",
    "contexts": "retrieved_contexts",
    "answer": "response",
    "ground_truth": "reference",
}
"""RAGAS v1 column names and the v0.4 names they stand for."""

KNOWN_FIELDS = (
    "id",
    "user_input",
    "reference",
    "response",
    "retrieved_contexts",
    "retrieved_context_ids",
    "retrieved_context_scores",
    "judge",
    "judge_verdicts",
    "judges",
    "human_labels",
    "human_notes",
    "human_marks",
    "gold_labels",
    "metadata",
)
"""Fields with a meaning of their own; any other field is kept in the golden's metadata."""

CHECK_FIELD = "attention_check"
"""A session JSONL line holding an attention check (and people's answers on it), not a golden."""
_VERDICTS = frozenset(VALUES)

NAMED_FIELDS = frozenset(KNOWN_FIELDS) | frozenset(ALIASES)
"""Every field name read as itself (a set: looked up for every field of every golden)."""

CSV_JSON_COLUMNS = ("retrieved_contexts", "retrieved_context_ids", "retrieved_context_scores",
                    "judge_verdicts", "judges", "human_labels",
                    "human_notes", "human_marks", "gold_labels", "metadata")
"""CSV columns whose cells hold JSON (lists or objects)."""

IMPORTED_JUDGE = "imported"
"""The judge name given to ``judge_verdicts`` that come without a ``judge``."""


def validate_golden(obj: Any, name: str, line: int | None, notes: Notices | None = None
                    ) -> GoldenRecord:
    """Check one golden's JSON object and turn it into a GoldenRecord, or raise InputError."""

    def fail(message: str, field: str | None = None) -> InputError:
        return InputError(name, message, line=line, field=field)

    if not isinstance(obj, dict):
        raise fail(f"a golden must be a JSON object, not {described(obj)}.")
    if notes is not None and notes.mapping is not None:
        obj = notes.mapping.apply(obj, fail, notes)
    if not obj.keys().isdisjoint(ALIASES):  # renamed in a copy; the usual golden has none
        obj = dict(obj)
    for alias, canonical in ALIASES.items():
        if alias in obj:
            if canonical in obj and obj[canonical] != obj[alias]:
                raise fail(
                    f"both '{alias}' and '{canonical}' are given with different values; keep one "
                    f"('{alias}' is the RAGAS v1 name of '{canonical}').",
                    alias,
                )
            obj[canonical] = obj.pop(alias)

    user_input = obj.get("user_input")
    if user_input is None:
        raise fail("the question is missing; every golden needs a 'user_input'.", "user_input")
    if not isinstance(user_input, str) or not user_input.strip():
        raise fail(f"must be a non-empty string, not {described(user_input)}.", "user_input")

    reference = _optional_text(obj, "reference", fail)
    response = _optional_text(obj, "response", fail)
    trec = isinstance(obj.get("metadata"), dict) and obj["metadata"].get("trec") in ("run", "pool")
    if reference is None and response is None and not trec:  # TREC: relevance is to the query
        raise fail(
            "a golden needs a 'reference' answer (or a 'response') to judge its chunks against "
            "(a query of an IR collection, whose metadata says trec, needs none).",
            "reference",
        )

    contexts = obj.get("retrieved_contexts")
    if contexts is None:
        raise fail("the ranked chunks are missing; give them as a list of strings.",
                   "retrieved_contexts")
    if not isinstance(contexts, list):
        raise fail(f"must be a list of strings (the ranked chunks), not {described(contexts)}.",
                   "retrieved_contexts")
    if not contexts:
        raise fail("the list is empty; a golden needs at least one ranked chunk.",
                   "retrieved_contexts")
    if len(contexts) > MAX_CHUNKS:
        raise fail(f"the golden has {len(contexts):,} ranked chunks; at most {MAX_CHUNKS:,} are "
                   "read (a retriever's top-k, not a corpus): keep the top ranks.",
                   "retrieved_contexts")
    if set(map(type, contexts)) != {str}:  # checked in C; the rank only when one is wrong
        rank, chunk = next((r, c) for r, c in enumerate(contexts, 1) if not isinstance(c, str))
        raise fail(f"the chunk at rank {rank} must be a string, not {described(chunk)}.",
                   "retrieved_contexts")

    ids = _chunk_ids(obj.get("retrieved_context_ids"), len(contexts), fail)
    scores = _chunk_scores(obj.get("retrieved_context_scores"), len(contexts), fail)

    golden_id = obj.get("id")
    if golden_id is None or golden_id == "":
        golden_id = stable_golden_id(user_input, reference, response, contexts)
    elif isinstance(golden_id, bool) or not isinstance(golden_id, str | int):
        raise fail(f"must be a string, not {described(golden_id)}.", "id")
    golden_id = _clean_id(str(golden_id), notes)
    if not golden_id:
        raise fail("the id holds only spaces or invisible characters; give it a visible name.",
                   "id")

    metadata = obj.get("metadata", {})
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        raise fail(f"must be a JSON object, not {described(metadata)}.", "metadata")
    metadata = dict(metadata)
    extra = [key for key in obj if key not in NAMED_FIELDS]
    for key in extra:  # keep what we don't use (e.g. reference_contexts)
        if key in metadata and metadata[key] != obj[key]:
            raise fail(f"'{key}' is given both at the top level and in metadata, differently.",
                       key)
        metadata[key] = obj[key]

    k = len(contexts)
    judge_verdicts: dict[str, list[JudgeVerdict | None]] = {}
    if "judge_verdicts" in obj:
        judge_name = obj.get("judge", IMPORTED_JUDGE)
        if not isinstance(judge_name, str) or not judge_name.strip():
            raise fail(f"must be the judge's name as a string, not {described(judge_name)}.", "judge")
        judge_verdicts[judge_name] = _judge_list(obj["judge_verdicts"], k, "judge_verdicts", fail,
                                                 golden_id)
    elif "judge" in obj:
        raise fail("'judge' is given but 'judge_verdicts' is missing.", "judge_verdicts")
    judges = obj.get("judges")
    if judges is not None:
        if not isinstance(judges, dict):
            raise fail("must be an object from judge name to a list of verdicts.", "judges")
        for judge_name, verdicts in judges.items():
            if judge_name in judge_verdicts:
                raise fail(f"the judge '{judge_name}' is given twice.", "judges")
            judge_verdicts[judge_name] = _judge_list(verdicts, k, f"judges.{judge_name}", fail,
                                                     golden_id)

    human_labels: dict[str, list[Answer | None]] = {}
    raw_labels = obj.get("human_labels")
    if raw_labels is not None:
        if not isinstance(raw_labels, dict):
            raise fail('must be an object from annotator name to a list of 0/1/"unsure"/null, '
                       'e.g. {"alice": [1, 0, null]}.', "human_labels")
        for given, labels in raw_labels.items():
            where = f"human_labels.{given}"
            annotator = _person(given, human_labels, where, fail, notes)
            if not isinstance(labels, list):
                raise fail(f'must be a list of 0, 1, "unsure" or null, not {described(labels)}.',
                           where)
            _one_per_chunk(labels, k, "label", where, fail, golden_id)
            for rank, label in enumerate(labels, 1):
                if label is not None and not is_answer(label):
                    raise fail(f'the label at rank {rank} is {json.dumps(label)}; use 0, 1, '
                               '"unsure" or null.', where)
            human_labels[annotator] = labels

    human_notes: dict[str, list[str | None]] = {}
    raw_notes = obj.get("human_notes")
    if raw_notes is not None:
        if not isinstance(raw_notes, dict):
            raise fail("must be an object from annotator name to a list of notes.", "human_notes")
        for given, comments in raw_notes.items():
            where = f"human_notes.{given}"
            annotator = _person(given, human_notes, where, fail, notes)
            if not isinstance(comments, list):
                raise fail(f"must be a list of {k} strings or nulls, not {described(comments)}.",
                           where)
            _one_per_chunk(comments, k, "note", where, fail, golden_id)
            if any(note is not None and not isinstance(note, str) for note in comments):
                raise fail("every note must be a string or null.", where)
            human_notes[annotator] = comments
    human_marks: dict[str, list[dict[str, Any] | None]] = {}
    raw_marks = obj.get("human_marks")
    if raw_marks is not None:
        if not isinstance(raw_marks, dict):
            raise fail("must be an object from annotator name to a list of marks.", "human_marks")
        for given, marks in raw_marks.items():
            where = f"human_marks.{given}"
            annotator = _person(given, human_marks, where, fail, notes)
            if annotator not in human_labels and annotator not in human_notes:
                raise fail(f"'{annotator}' has marks but no human_labels or human_notes.", where)
            if not isinstance(marks, list):
                raise fail(f"must be a list of {k} objects or nulls, not {described(marks)}.", where)
            _one_per_chunk(marks, k, "mark", where, fail, golden_id)
            held = (human_labels.get(annotator) or [None] * k,
                    human_notes.get(annotator) or [None] * k)
            human_marks[annotator] = [None if mark is None else _mark(mark, rank, where, fail)
                                      for rank, mark in enumerate(marks, 1)]
            if any(mark is not None and held[0][i] is None and held[1][i] is None
                   for i, mark in enumerate(marks)):
                raise fail("a mark stands on a rank where this person has no label or note.",
                           where)
    gold_labels = None
    raw_gold = obj.get("gold_labels")
    if raw_gold is not None:
        if not isinstance(raw_gold, list):
            raise fail(f"must be a list of {k} gold labels or nulls, not {described(raw_gold)}.",
                       "gold_labels")
        _one_per_chunk(raw_gold, k, "gold label", "gold_labels", fail, golden_id)
        gold_labels = [None if gold is None else _gold(gold, rank, fail)
                       for rank, gold in enumerate(raw_gold, 1)]
    for annotator, labels in human_labels.items():
        said = human_notes.get(annotator, [])
        for rank, label in enumerate(labels, 1):
            if label is None or not kind_of(label).needs_note:
                continue
            if not (rank <= len(said) and (said[rank - 1] or "").strip()):
                word = kind_of(label).word
                raise fail(f'the label at rank {rank} is "{word}" without a note: an {word} '
                           f"label needs one in human_notes.{annotator} saying what is unclear.",
                           f"human_labels.{annotator}")

    return GoldenRecord(
        id=golden_id,
        user_input=user_input,
        reference=reference,
        response=response,
        retrieved_contexts=contexts,
        metadata=metadata,
        judge_verdicts=judge_verdicts,
        human_labels=human_labels,
        human_notes=human_notes,
        human_marks=human_marks,
        gold_labels=gold_labels,
        retrieved_context_ids=ids,
        retrieved_context_scores=scores,
        line=line or 0,
    )


def _chunk_ids(given: Any, k: int, fail: Callable[..., InputError]
               ) -> list[str | None] | None:
    """A golden's chunk ids: one per chunk (a string, a whole number or null), distinct."""
    if given is None:
        return None
    field = "retrieved_context_ids"
    if not isinstance(given, list) or len(given) != k:
        raise fail(f"must be a list of {k} chunk ids (one per ranked chunk, null where a chunk "
                   f"has none), not {described(given) if not isinstance(given, list) else len(given)}"
                   ".", field)
    ids: list[str | None] = []
    for rank, value in enumerate(given, 1):
        if value is None:
            ids.append(None)
        elif isinstance(value, bool) or not isinstance(value, str | int) or not str(value).strip():
            raise fail(f"the id at rank {rank} must be a non-empty string, not {described(value)}.",
                       field)
        else:
            ids.append(str(value).strip())
    named = [i for i in ids if i is not None]
    if len(set(named)) != len(named):
        twice = next(i for i in named if named.count(i) > 1)
        raise fail(f"the id {json.dumps(twice, ensure_ascii=False)} is given to two chunks of "
                   "this golden; a chunk id names one chunk of a ranking.", field)
    return ids if named else None


def _chunk_scores(given: Any, k: int, fail: Callable[..., InputError]
                  ) -> list[float | None] | None:
    """A golden's retrieval scores: one finite number (or null) per chunk."""
    if given is None:
        return None
    field = "retrieved_context_scores"
    if not isinstance(given, list) or len(given) != k:
        raise fail(f"must be a list of {k} scores (one per ranked chunk, null where a chunk has "
                   f"none), not {described(given) if not isinstance(given, list) else len(given)}.",
                   field)
    scores: list[float | None] = []
    for rank, value in enumerate(given, 1):
        if value is None:
            scores.append(None)
        elif isinstance(value, bool) or not isinstance(value, int | float) or \
                not math.isfinite(value):
            raise fail(f"the score at rank {rank} must be a finite number, not {described(value)}.",
                       field)
        else:
            scores.append(float(value))
    return scores if any(v is not None for v in scores) else None


INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff"))
"""Zero-width characters: in an id they make two ids that look the same differ."""


def _clean_id(given: str, notes: Notices | None) -> str:
    """A golden id in one spelling: Unicode NFC (an accent composed or not is one id), without
    zero-width characters or spaces around it; a changed id is said once per file."""
    # An ASCII id is already NFC and holds no zero-width character.
    cleaned = (given.strip() if given.isascii()
               else unicodedata.normalize("NFC", given).translate(INVISIBLE).strip())
    if cleaned != given and notes is not None:
        notes.add("golden ids were written in one spelling (Unicode NFC, no zero-width "
                  "characters, no spaces around them), e.g. "
                  f"{json.dumps(given)} is {json.dumps(cleaned, ensure_ascii=False)}.", "ids")
    return cleaned


def _person(given: str, taken: dict[str, Any], where: str, fail: Any,
            notes: Notices | None) -> str:
    """An annotator's name without the spaces around it (' alice' is alice), said once."""
    trimmed = given.strip()
    if not trimmed:
        raise fail("the annotator's name is empty; name who gave these labels.", where)
    if trimmed in taken:
        raise fail(f"two names here are {json.dumps(trimmed, ensure_ascii=False)} once the spaces "
                   "around them are dropped; give that person's labels once.", where)
    if trimmed != given and notes is not None:
        notes.add(f"the annotator name {json.dumps(given, ensure_ascii=False)} has spaces "
                  f"around it; its labels are kept under {json.dumps(trimmed, ensure_ascii=False)}.")
    return trimmed


def _optional_text(obj: dict[str, Any], key: str, fail: Any) -> str | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise fail(f"must be a string, not {described(value)}.", key)
    return value


def _one_per_chunk(items: list[Any], k: int, what: str, where: str, fail: Any,
                   golden_id: str) -> None:
    """A list of one entry per ranked chunk: a longer or shorter one is almost always a list
    from another golden, or a chunk added or removed without its entry."""
    if len(items) != k:
        raise fail(f"golden '{golden_id}' has {counted(k, 'ranked chunk')} but "
                   f"{counted(len(items), what)} here; give one per ranked chunk, in rank order "
                   "(null where there is none).", where)


_MARK_KINDS: dict[str, tuple[type, ...]] = {
    "action": (str,), "judge": (str,), "shown_verdict": (int,), "blind_verdict": (int,),
    "reason_wrong": (bool,), "decision_ms": (int, float), "created_at": (str,),
    "updated_at": (str,), "grade": (int,), "guideline": (int,)}
_ACTIONS = ("accept", "flip", "set", "import")


def _mark(item: Any, rank: int, where: str, fail: Any) -> dict[str, Any]:
    """One entry of a person's human_marks list (MARK_FIELDS), each fault with its sentence."""
    if not isinstance(item, dict):
        raise fail(f"the mark at rank {rank} must be an object, not {described(item)}.", where)
    for key, value in item.items():
        kinds = _MARK_KINDS.get(key)
        if kinds is None:
            raise fail(f"the mark at rank {rank} has '{key}'; a mark holds "
                       f"{', '.join(MARK_FIELDS)}.", where)
        if value is None:
            continue
        if type(value) not in kinds or (key.endswith("_verdict") and not is_verdict(value)) or (
                key == "action" and value not in _ACTIONS) or (
                key == "decision_ms" and not (math.isfinite(value) and value >= 0)) or (
                key == "grade" and value < 0) or (key == "guideline" and value < 1):
            raise fail(f"'{key}' in the mark at rank {rank} is {described(value)}, which it cannot "
                       "be.", where)
    return {key: item[key] for key in MARK_FIELDS if item.get(key) is not None}


def _gold(item: Any, rank: int, fail: Any) -> dict[str, Any]:
    """One entry of gold_labels: a verdict and who decided it, when, with an optional note."""
    if not isinstance(item, dict) or set(item) - set(GOLD_FIELDS):
        raise fail(f"the gold label at rank {rank} must be an object holding "
                   f"{', '.join(GOLD_FIELDS)}.", "gold_labels")
    if not is_verdict(item.get("verdict")):
        raise fail(f"the gold label at rank {rank} has verdict "
                   f"{json.dumps(item.get('verdict'))}; it must be {SPOKEN}.", "gold_labels")
    for key in ("decided_by", "decided_at"):
        if not isinstance(item.get(key), str) or not item[key]:
            raise fail(f"the gold label at rank {rank} needs '{key}' as a string.", "gold_labels")
    if item.get("note") is not None and not isinstance(item["note"], str):
        raise fail(f"the gold label's note at rank {rank} must be a string.", "gold_labels")
    return {key: item[key] for key in GOLD_FIELDS if item.get(key) is not None}


CHECK_ANSWER_KINDS: dict[str, tuple[type, ...]] = {
    "truth": (int,), "answer": (int,), "unsure": (bool,), "shown_verdict": (int,),
    "note": (str,), "answered_at": (str,), "distractor": (bool,)}
"""What a person's answer on one rank of an attention check holds in the session JSONL."""


def validate_check(obj: dict[str, Any], name: str, line: int) -> CheckRecord:
    """A session JSONL line holding an attention check and the answers on it, or InputError."""

    def fail(message: str, field: str) -> InputError:
        return InputError(name, message, line=line, field=field)

    check = obj[CHECK_FIELD]
    if not isinstance(check, dict):
        raise fail(f"must be an object, not {described(check)}.", CHECK_FIELD)
    for key in ("source", "golden_id", "created_at"):
        if not isinstance(check.get(key), str) or not check[key]:
            raise fail(f"needs '{key}' as a string.", f"{CHECK_FIELD}.{key}")
    record = check.get("record")
    if not isinstance(record, dict):
        record = {}
    chunks = record.get("chunks")
    if not isinstance(chunks, list) or not chunks or not isinstance(record.get("truth"), list) \
            or len(record["truth"]) != len(chunks):
        raise fail("needs a record with its chunks and one truth per chunk, as the session "
                   "stored it.", f"{CHECK_FIELD}.record")
    answers = obj.get("check_answers", {})
    if not isinstance(answers, dict):
        raise fail("must be an object from annotator name to a list of answers.", "check_answers")
    out: dict[str, list[dict[str, Any] | None]] = {}
    for person, given in answers.items():
        where = f"check_answers.{person}"
        if not isinstance(given, list) or len(given) != len(chunks):
            raise fail(f"must be a list of {len(chunks)} answers or nulls.", where)
        out[person] = []
        for rank, answer in enumerate(given, 1):
            if answer is None:
                out[person].append(None)
                continue
            if not isinstance(answer, dict) or not isinstance(answer.get("answered_at"), str) \
                    or any(key not in CHECK_ANSWER_KINDS or (value is not None and (
                        type(value) not in CHECK_ANSWER_KINDS[key]
                        or (key in ("truth", "answer", "shown_verdict") and not is_verdict(value))))
                           for key, value in answer.items()):
                raise fail(f"the answer at rank {rank} must be an object holding "
                           f"{', '.join(CHECK_ANSWER_KINDS)} (answered_at needed).", where)
            out[person].append({key: answer[key] for key in CHECK_ANSWER_KINDS
                                if answer.get(key) is not None})
    return CheckRecord(check["source"], check["golden_id"], record, check["created_at"], out,
                       line)


def _judge_list(raw: Any, k: int, where: str, fail: Any, golden_id: str
                ) -> list[JudgeVerdict | None]:
    if not isinstance(raw, list):
        raise fail(f"must be a list with one verdict per chunk, not {described(raw)}.", where)
    _one_per_chunk(raw, k, "verdict", where, fail, golden_id)
    # The usual list, an object per chunk with a verdict, a reason and perhaps P(relevant) as a
    # float, is checked as a whole, in C where it can be (an import reads a million of them);
    # any other list is checked entry by entry, each fault with its own sentence.
    if set(map(type, raw)) == {dict}:
        verdicts: list[Any] = list(map(dict.get, raw, repeat("verdict")))
        reasons: list[Any] = list(map(dict.get, raw, repeat("reason")))
        chances: list[Any] = list(map(dict.get, raw, repeat("p_relevant")))
        grades: list[Any] = list(map(dict.get, raw, repeat("grade")))
        given = [p for p in chances if p is not None]
        if (set(map(type, verdicts)) == {int} and set(verdicts) <= _VERDICTS
                and set(map(type, reasons)) <= {str, NoneType}
                and set(map(type, given)) <= {float}
                and set(map(type, grades)) == {NoneType}
                and all(map(_ZERO.__le__, given)) and all(map(_ONE.__ge__, given))):  # no NaN
            return list(map(JudgeVerdict, verdicts, reasons, chances))
    return [_judge_verdict(item, rank, where, fail) for rank, item in enumerate(raw, 1)]


_ZERO, _ONE = 0.0, 1.0


def _judge_verdict(item: Any, rank: int, where: str, fail: Any) -> JudgeVerdict | None:
    """One entry of a judge's verdict list, every check with its sentence."""
    if item is None:
        return None
    if is_verdict(item):  # a bare 0 or 1 is a verdict without a reason
        return JudgeVerdict(verdict=item)
    if not isinstance(item, dict):
        raise fail(f"the verdict at rank {rank} must be an object like "
                   f'{{"verdict": 1, "reason": "..."}}, not {described(item)}.', where)
    verdict = item.get("verdict")
    if not is_verdict(verdict):
        raise fail(f"the verdict at rank {rank} is {json.dumps(verdict)}; a verdict must be "
                   f"{SPOKEN}.", where)
    reason = item.get("reason")
    if reason is not None and not isinstance(reason, str):
        raise fail(f"the reason at rank {rank} must be a string.", where)
    p = item.get("p_relevant")
    if p is not None and (isinstance(p, bool) or not isinstance(p, int | float)
                          or not 0.0 <= p <= 1.0 or math.isnan(p)):
        raise fail(f"p_relevant at rank {rank} must be a number from 0 to 1.", where)
    grade = item.get("grade")
    if grade is not None and (type(grade) is not int or grade < 0):
        raise fail(f"the grade at rank {rank} must be a whole number from 0 up, not "
                   f"{described(grade)}.", where)
    return JudgeVerdict(verdict=verdict, reason=reason,
                        p_relevant=None if p is None else float(p), grade=grade)


def described(value: Any) -> str:
    """How an error names a value it did not expect: "null", "the number 3", "a list"..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {json.dumps(value)}"
    if isinstance(value, str):
        shown = value if len(value) <= 20 else value[:17] + "..."
        return f"the string {json.dumps(shown, ensure_ascii=False)}"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
