"""Exports: the calibration set and RAGAS's annotation JSON for choosing and tuning judges
(here), people's labels written back as each tracer takes them (``writeback``), and TREC qrels
and runs (``trec``).

- ``calibration`` (JSONL): one golden per line with its ranked chunks, the truth on each
  chunk (gold, agreed, or one person's) and where it came from, every person's labels, every
  judge's verdicts and reasons, context precision under each, and the golden's split; with
  guidelines, the version each label was made under.
- ``ragas-annotation`` (JSON): RAGAS's ``MetricAnnotation`` file, as loaded by
  ``MetricAnnotation.from_json`` and ``metric.train(path=...)``. RAGAS keys a sample's prompts
  by name and context precision calls its one prompt once per chunk, so every chunk is its own
  sample, holding one ``context_precision_prompt`` entry: the judge's output, and the edited
  output where the truth differs. Every sample is accepted and its ``metric_output`` is the
  truth, because RAGAS takes few-shot demonstrations only from accepted samples (preferring
  the edited output) and drops rejected samples of a continuous metric from instruction
  optimisation: a corrected sample is exactly the example a prompt optimiser should learn from.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import IO, Any

from annotator.models import Label
from annotator.scoring.truth import TEAM, Truth, truth
from annotator.stats.metrics import context_precision_when_complete
from annotator.store.session import Session

RAGAS_METRIC = {"reference": "llm_context_precision_with_reference",
                "response": "llm_context_precision_without_reference"}
RAGAS_PROMPT = "context_precision_prompt"
"""The prompt RAGAS's context-precision metrics call once per chunk."""


PAGE = 500
"""Goldens read at once by an export: memory stays flat in the session's size."""


def _pages(session: Session) -> Iterator[list[str]]:
    ids = session.golden_ids()
    for start in range(0, len(ids), PAGE):
        yield ids[start:start + PAGE]


def calibration_records(session: Session, annotator: str | None = None) -> Iterator[dict[str, Any]]:
    """One calibration record per golden (see the module docstring), read a page at a time."""
    found = truth(session, annotator)
    gold = session.gold_labels()
    splits = session.splits()
    judges = [j.name for j in session.judges()]
    people = session.annotators()
    versioned = bool(session.guidelines())  # a session without guidelines: no such key
    for page in _pages(session):
        verdicts = {name: session.verdicts(name, page) for name in judges}
        labels = {name: session.labels(name, page) for name in people}
        wrong = {name: _reason_wrong(labels.values(), name) for name in judges}
        for golden in session.goldens(page):
            ids = [c.id for c in golden.chunks]
            truth_labels = found.at(ids)
            judged = {name: [verdicts[name].get(c) for c in ids] for name in judges}
            record: dict[str, Any] = {
                "id": golden.id, "user_input": golden.user_input, "reference": golden.reference,
                "response": golden.response, "retrieved_contexts": [c.text for c in golden.chunks],
                "metadata": golden.metadata, "split": splits.get(golden.id),
                "truth": truth_labels,
                "truth_source": [_source(found, gold, c, t) for c, t in zip(ids, truth_labels,
                                                                            strict=True)],
                "gold_decided_by": [g.decided_by if (g := gold.get(c)) else None for c in ids],
                "human_labels": {p: [None if (lab := labels[p].get(c)) is None else lab.answer
                                     for c in ids] for p in people},
                "judges": {name: [None if v is None else {
                    "verdict": v.verdict, "reason": v.reason, "p_relevant": v.p_relevant,
                    "reason_marked_wrong": c in wrong[name]}
                    for c, v in zip(ids, said, strict=True)] for name, said in judged.items()},
                "context_precision": {
                    "truth": context_precision_when_complete(truth_labels),
                    **{name: context_precision_when_complete([None if v is None else v.verdict
                                                              for v in said])
                       for name, said in judged.items()}},
            }
            if versioned:  # the guidelines' version each label was made under
                record["human_guidelines"] = {
                    p: [None if (lab := labels[p].get(c)) is None else lab.guideline
                        for c in ids] for p in people}
            yield record


def _source(found: Truth, gold: dict[int, Any], chunk_id: int, right: int | None) -> str | None:
    if right is None:
        return None
    if found.source != TEAM:
        return found.source
    return "gold" if chunk_id in gold else "agreed"


def write_calibration(session: Session, out: IO[str], annotator: str | None = None
                      ) -> tuple[int, int]:
    """Write the calibration set as JSONL; return the number of goldens, and of judge verdicts
    whose reason people marked wrong (``reason_marked_wrong``: no demonstration)."""
    count = marked = 0
    for record in calibration_records(session, annotator):
        out.write(json.dumps(record, ensure_ascii=False) + "\n")
        count += 1
        marked += sum(v["reason_marked_wrong"] for said in record["judges"].values()
                      for v in said if v is not None)
    return count, marked


def ragas_annotation(session: Session, judge: str, annotator: str | None = None,
                     against: str = "reference") -> tuple[dict[str, list[dict[str, Any]]], int]:
    """RAGAS's MetricAnnotation data: one sample per chunk the judge and the truth both cover,
    but those whose reason people marked wrong (a demonstration would teach that reasoning);
    and how many chunks were left out for that."""
    found = truth(session, annotator)
    people = session.annotators()
    gold_notes = {c: g.note for c, g in session.gold_labels().items() if g.note}
    samples = []
    left_out = 0
    for page in _pages(session):
        verdicts = session.verdicts(judge, page)
        labels = [session.labels(p, page) for p in people]
        notes = {c: label.note for theirs in labels for c, label in theirs.items() if label.note}
        notes.update(gold_notes)
        wrong = _reason_wrong(labels, judge)
        for golden in session.goldens(page):
            answer = golden.reference if against == "reference" else golden.response
            if answer is None:
                continue
            for chunk, right in zip(golden.chunks, found.at([c.id for c in golden.chunks]),
                                    strict=True):
                said = verdicts.get(chunk.id)
                if said is None or right is None:
                    continue
                if chunk.id in wrong:
                    left_out += 1
                    continue
                samples.append(_sample(golden.user_input, chunk.text, answer, against, said.reason,
                                       said.verdict, right, notes.get(chunk.id)))
    return {RAGAS_METRIC[against]: samples}, left_out


def _reason_wrong(labels: Iterable[Mapping[int, Label]], judge: str) -> set[int]:
    """The chunks on which someone marked this judge's reason wrong."""
    return {c for theirs in labels for c, label in theirs.items()
            if label.reason_wrong and label.judge == judge}


def _sample(question: str, context: str, answer: str, against: str, reason: str | None,
            verdict: int, right: int, note: str | None) -> dict[str, Any]:
    """One chunk as a RAGAS annotation sample: the judge's output, and the edit where the
    truth differs."""
    output = {"reason": reason or "", "verdict": verdict}
    edited = None
    if right != verdict:
        edited = {"reason": note or _why(right), "verdict": right}
    metric_input = {"user_input": question, "retrieved_contexts": [context],
                    "reference" if against == "reference" else "response": answer}
    return {
        "metric_input": metric_input,
        "metric_output": float(right),
        "prompts": {RAGAS_PROMPT: {
            "prompt_input": {"question": question, "context": context, "answer": answer},
            "prompt_output": output,
            "edited_output": edited}},
        "is_accepted": True,
    }


def _why(verdict: int) -> str:
    return ("A reviewer found this context useful in arriving at the given answer." if verdict
            else "A reviewer found this context not useful in arriving at the given answer.")
