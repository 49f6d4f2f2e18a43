"""Attention checks: goldens whose truth is settled, shown among the others exactly like them.

A check is a snapshot of a golden (question, reference, chunks, the judges' verdicts on them)
with the truth on each rank: the gold labels an adjudicator gave in this session, or the labels
of a gold file (``--checks-from``; where the people in it disagree or are unsure, a rank has no
truth). A person's answers on a check are kept apart (``check_answers``): never a label, never
in agreement, CP or an export of labels (the session JSONL carries them as check lines, so
they survive a round trip); the report's People section gives each person's accuracy on
them, with a Wilson interval, and warns below ``--checks-min``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from annotator.errors import InputError, SessionError
from annotator.models import Chunk, Golden, StoredVerdict
from annotator.stats import chunk_agreement
from annotator.stats.stat import Stat
from annotator.store.session import Session
from annotator.text import counted
from annotator.verdict import is_verdict

GOLD = "gold"
"""The source of checks made from this session's adjudicated gold labels."""
RANKS = 1 << 20
"""A check chunk's id is -(check id * RANKS + rank): never a session chunk's id."""


@dataclass(frozen=True, eq=False)
class Check:
    """One check golden: shown like any golden, answered apart from labels."""

    id: int
    source: str
    golden: Golden
    truth: list[int | None]
    """The settled verdict on each rank (None: not settled, so that rank is not scored)."""
    verdicts: dict[str, list[list[Any] | None]]
    """Judge -> per rank [verdict, reason, P(relevant)] or None, as the judge said it."""

    def rank_of(self, chunk_id: int) -> int:
        """The rank of one of this check's chunk ids."""
        return -chunk_id - self.id * RANKS

    def stored_verdicts(self, judge: str | None) -> dict[int, StoredVerdict]:
        """The judge's verdicts on this check, as the screen shows any golden's."""
        said = self.verdicts.get(judge or "", [])
        return {chunk.id: StoredVerdict(chunk.id, judge or "", v[0], v[1], v[2])
                for chunk, v in zip(self.golden.chunks, said, strict=False) if v is not None}


def _record(golden: Golden, truth: list[int | None],
            verdicts: dict[str, list[list[Any] | None]]) -> dict[str, Any]:
    """A check as stored: the golden's content, the judges' verdicts, the truth per rank."""
    return {"user_input": golden.user_input, "reference": golden.reference,
            "response": golden.response, "metadata": golden.metadata,
            "chunks": [c.text for c in golden.chunks], "verdicts": verdicts, "truth": truth}


def from_gold(session: Session) -> list[tuple[str, dict[str, Any]]]:
    """A check for every golden with an adjudicated gold label (its other ranks unscored)."""
    gold = session.gold_labels()
    if not gold:
        return []
    ids = [g for g, chunks in session.chunk_ids().items() if any(c in gold for c in chunks)]
    judges = [j.name for j in session.judges()]
    said = {j: session.verdicts(j, ids) for j in judges}
    out = []
    for golden in session.goldens(ids):
        truth = [g.verdict if (g := gold.get(c.id)) is not None else None for c in golden.chunks]
        verdicts = {j: [None if (v := said[j].get(c.id)) is None
                        else [v.verdict, v.reason, v.p_relevant] for c in golden.chunks]
                    for j in judges}
        out.append((golden.id, _record(golden, truth, verdicts)))
    return out


def from_file(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """A check for every golden of a gold file whose people settle at least one rank (they all
    give it the same 0 or 1). Raises InputError naming the file when none does."""
    from annotator.formats import read_goldens

    out = []
    for record in read_goldens(path):
        truth: list[int | None] = []
        for rank in range(len(record.retrieved_contexts)):
            given = {labels[rank] for labels in record.human_labels.values()
                     if labels[rank] is not None}
            only = given.pop() if len(given) == 1 else None
            truth.append(only if is_verdict(only) else None)
        if all(t is None for t in truth):
            continue
        golden = Golden(record.id, 0, record.user_input, record.reference, record.response,
                        record.metadata, tuple(Chunk(0, record.id, k, text) for k, text
                                               in enumerate(record.retrieved_contexts, 1)))
        verdicts = {name: [None if v is None else [v.verdict, v.reason, v.p_relevant]
                           for v in said] for name, said in record.judge_verdicts.items()}
        out.append((record.id, _record(golden, truth, verdicts)))
    if not out:
        raise InputError(str(path), "no golden in it has a settled label (human_labels where "
                               "everyone gives a chunk the same 0 or 1), so it holds no check.")
    return out


def load(session: Session) -> list[Check]:
    """Every check the session keeps."""
    checks = []
    for check_id, source, golden_id, record in session.checks():
        chunks = tuple(Chunk(-(check_id * RANKS + rank), golden_id, rank, text)
                       for rank, text in enumerate(record["chunks"], 1))
        golden = Golden(golden_id, 0, record["user_input"], record["reference"],
                        record["response"], record["metadata"], chunks)
        checks.append(Check(check_id, source, golden, record["truth"], record["verdicts"]))
    return checks


def prepare(session: Session, gold_file: Path | None) -> list[Check]:
    """Keep the session's gold goldens (and a gold file's) as checks; every check kept.
    Raises SessionError when there is none to show."""
    session.add_checks(GOLD, from_gold(session))
    if gold_file is not None:
        session.add_checks(str(gold_file), from_file(gold_file))
    checks = load(session)
    if not checks:
        raise SessionError(
            "--checks needs goldens whose truth is settled, and this session has none: settle "
            "disputes first ('annotator annotate SESSION --adjudicate'), or give a gold file "
            "with --checks-from gold.jsonl (goldens whose human_labels are the truth).")
    return checks


def is_turn(session_id: str, annotator: str, completed: int, rate: float) -> bool:
    """Whether a check comes after this person's ``completed``-th golden of a sitting: a
    reproducible draw at ``rate``."""
    if rate <= 0:
        return False
    digest = hashlib.sha256(f"{session_id}:{annotator}:check:{completed}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < rate


def next_check(session: Session, annotator: str, checks: Sequence[Check]) -> Check | None:
    """The check this person sees next: one they have not answered whole, in an order drawn
    per person (so two people do not see the same checks in the same order)."""
    answered = session.check_answers(annotator)
    order = sorted(checks, key=lambda c: hashlib.sha256(
        f"{session.session_id}:{annotator}:{c.id}".encode()).digest())
    return next((c for c in order if any(
        (row := answered.get((c.id, rank))) is None or (row["answer"] is None
                                                         and not row["unsure"])
        for rank in range(1, len(c.golden.chunks) + 1))), None)


@dataclass(frozen=True, slots=True)
class CheckScore:
    """One person's answers on attention checks."""

    answered: int
    """Check chunks with a truth the person answered 0 or 1."""
    right: int

    @property
    def accuracy(self) -> Stat:
        """The share answered right, with a Wilson 95% interval (chunks as independent)."""
        return chunk_agreement.rate(self.right, self.answered, "no attention check answered yet")

    def warning(self, minimum: float) -> str | None:
        """A sentence when the accuracy is below the minimum (None: no warning)."""
        value = self.accuracy.value
        if value is None or value >= minimum:
            return None
        return (f"{counted(self.answered - self.right, 'attention check')} of {self.answered} "
                f"answered wrong ({value:.0%}, below {minimum:.0%}): look at these labels "
                "again before trusting them.")


def scores(session: Session) -> dict[str, CheckScore]:
    """Person -> their score on attention checks."""
    return {person: CheckScore(*counts) for person, counts in session.check_scores().items()}
