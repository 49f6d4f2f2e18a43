"""Plain data types shared by the core, the CLI and the TUI (no I/O here)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from annotator.verdict import Answer, from_stored

MAX_CHUNKS = 1000
"""The most ranked chunks one golden may hold: more would hang the screen that shows them."""

Action = Literal["accept", "flip", "set", "import"]
"""How a label came about: accepting or flipping the judge, setting it blind or by hand, or import."""



GOLDENS_SUFFIXES = (".jsonl", ".ndjson", ".json", ".csv", ".parquet")
"""The file names goldens come in (annotator.formats reads them); anything else is a session."""

DESIGNS = ("uniform", "stratified", "active")
"""The labelling designs a sample may be drawn by (annotator.stats.designs)."""

CHECKS_MIN = 0.8
"""Below this accuracy on attention checks, the People section warns (annotator.scoring.checks)."""
DEFAULT_CHECK_RATE = 0.05
"""The share of goldens that are attention checks when only --checks-from is given."""

@dataclass(slots=True)
class JudgeVerdict:
    """A judge's verdict on one chunk, with its reason and optional P(relevant). Not frozen: an
    import makes one per chunk, and a frozen one costs 2.5 times as much to make."""

    verdict: int
    reason: str | None = None
    p_relevant: float | None = None
    grade: int | None = None
    """The grade a graded judge replied (its verdict read through the scale), if any."""


MARK_FIELDS = ("action", "judge", "shown_verdict", "blind_verdict", "reason_wrong", "decision_ms",
               "created_at", "updated_at", "grade", "guideline")
"""What a label records beyond its answer and note: how it came about (the judge shown, what was
said blind), the person's marks on it, its time; carried by the session JSONL as human_marks."""

GOLD_FIELDS = ("verdict", "decided_by", "note", "decided_at")
"""A gold label as the session JSONL carries it (gold_labels, one entry per rank)."""


@dataclass(slots=True)
class GoldenRecord:
    """One golden as read from (or written to) a file, already validated."""

    id: str
    user_input: str
    retrieved_contexts: list[str]
    reference: str | None = None
    response: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    judge_verdicts: dict[str, list[JudgeVerdict | None]] = field(default_factory=dict)
    """Judge name -> one entry per rank (None where that judge gave no verdict)."""
    human_labels: dict[str, list[Answer | None]] = field(default_factory=dict)
    """Annotator -> one entry per rank: 0, 1, "unsure", or None where that person has not
    decided."""
    human_notes: dict[str, list[str | None]] = field(default_factory=dict)
    """Annotator -> one comment per rank (None where there is none)."""
    human_marks: dict[str, list[dict[str, Any] | None]] = field(default_factory=dict)
    """Annotator -> per rank the label's MARK_FIELDS (None where that person has no label); an
    import without them stamps its labels as imported now."""
    gold_labels: list[dict[str, Any] | None] | None = None
    """Per rank the adjudicated gold label's GOLD_FIELDS (None where there is none)."""
    retrieved_context_ids: list[str | None] | None = None
    """Per rank the chunk's own id (a document or passage id), as RAGAS names the field; None
    when the file gave none. Distinct within a golden."""
    retrieved_context_scores: list[float | None] | None = None
    """Per rank the retriever's score for the chunk, when the file gave one."""
    line: int = 0
    """Where the golden came from, for error messages (0 when it came from a session)."""
    _sha256: str | None = field(default=None, repr=False, compare=False)

    def content_sha256(self) -> str:
        """A hash of what makes the golden itself (not verdicts or labels), computed once: a
        record's content is not changed after it is read (its verdicts and labels may be)."""
        if self._sha256 is None:
            self._sha256 = content_sha256(self.user_input, self.reference, self.response,
                                          self.retrieved_contexts, self.metadata,
                                          self.retrieved_context_ids,
                                          self.retrieved_context_scores)
        return self._sha256


@dataclass(slots=True)
class CheckRecord:
    """An attention check as the session JSONL carries it: the stored snapshot and, per person,
    their answer on each rank (None where they gave none)."""

    source: str
    golden_id: str
    record: dict[str, Any]
    created_at: str
    answers: dict[str, list[dict[str, Any] | None]]
    line: int = 0


def content_sha256(
    user_input: str,
    reference: str | None,
    response: str | None,
    retrieved_contexts: list[str],
    metadata: dict[str, Any] | None = None,
    ids: list[str | None] | None = None,
    scores: list[float | None] | None = None,
) -> str:
    """sha256 of a golden's content in a canonical JSON form (the chunks' ids and scores only
    where there are some, so a golden without them keeps the hash it always had)."""
    payload: dict[str, Any] = {
        "user_input": user_input,
        "reference": reference,
        "response": response,
        "retrieved_contexts": retrieved_contexts,
    }
    if metadata is not None:
        payload["metadata"] = metadata
    if ids is not None:
        payload["retrieved_context_ids"] = ids
    if scores is not None:
        payload["retrieved_context_scores"] = scores
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


_CANONICAL = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":"))
"""Made once: json.dumps with options makes an encoder on every call (every golden, at import)."""


def canonical_json(obj: Any) -> str:
    """The one JSON form things are hashed in: sorted keys, no spaces, UTF-8 as is."""
    return _CANONICAL.encode(obj)


def stable_golden_id(
    user_input: str, reference: str | None, response: str | None, retrieved_contexts: list[str]
) -> str:
    """The id of a golden that came without one: a short hash of its question, answers and chunks."""
    return "g-" + content_sha256(user_input, reference, response, retrieved_contexts)[:16]


@dataclass(frozen=True, slots=True)
class Chunk:
    """One retrieved context at a 1-based rank."""

    id: int
    golden_id: str
    rank: int
    text: str
    doc_id: str | None = None
    """The chunk's own id from the file (a document or passage id), if it had one."""
    score: float | None = None
    """The retriever's score, if the file gave one."""


@dataclass(frozen=True, slots=True)
class Golden:
    """A golden as stored in a session, with its ranked chunks."""

    id: str
    position: int
    user_input: str
    reference: str | None
    response: str | None
    metadata: dict[str, Any]
    chunks: tuple[Chunk, ...]


@dataclass(frozen=True, slots=True)
class Probe:
    """A synthetic noise chunk made from a golden to test a judge's gullibility; never one of
    the golden's chunks (annotator.scoring.probes)."""

    id: int
    golden_id: str
    kind: str
    number: int
    """1, 2, ... among the golden's probes of this kind."""
    text: str


class Price(NamedTuple):
    """USD per million tokens: prompt tokens, completion tokens, and prompt tokens a provider's
    cache served (None: billed as other prompt tokens)."""

    input: float
    output: float
    cached: float | None = None

    def discounted(self, share: float) -> Price:
        """The price at a share of this one (a batch's, at 0.5)."""
        return Price(self.input * share, self.output * share,
                     None if self.cached is None else self.cached * share)

    def cost(self, tokens_in: int, tokens_out: int, tokens_cached: int = 0) -> float:
        """USD for these tokens (cached ones are part of tokens_in, as providers count them)."""
        cached = min(tokens_cached, tokens_in) if self.cached is not None else 0
        return ((tokens_in - cached) * self.input + cached * (self.cached or 0.0)
                + tokens_out * self.output) / 1e6


@dataclass(frozen=True, slots=True)
class Judge:
    """A named model + prompt + parameters combination."""

    name: str
    model: str | None
    base_url: str | None
    prompt_id: str
    prompt_sha256: str | None
    parameters: dict[str, Any]
    prompt_text: str | None = None
    """A template prompt's canonical text (judge/template.py), to read back what was asked."""

    @property
    def provider(self) -> str:
        """Whose API its requests were written for (its parameters name it unless OpenAI)."""
        return str(self.parameters.get("provider", "openai"))


@dataclass(frozen=True, slots=True)
class StoredVerdict:
    """The judge verdict in force for one chunk (the latest one without an error)."""

    chunk_id: int
    judge: str
    verdict: int
    reason: str | None
    p_relevant: float | None
    grade: int | None = None


@dataclass(frozen=True, slots=True)
class Label:
    """One annotator's label on one chunk. ``verdict`` is what statistics count its answer as:
    None while only a note exists, and on an answer that is no verdict (unsure)."""

    chunk_id: int
    annotator: str
    verdict: int | None
    action: Action | None
    blind_verdict: int | None
    shown_verdict: int | None
    judge: str | None
    note: str | None
    decision_ms: float | None
    updated_at: str
    reason_wrong: bool = False
    """The person accepted the judge's verdict but marked its reason wrong (0/1 as stored)."""
    created_at: str = ""
    grade: int | None = None
    """The person's grade on a graded session's scale; ``verdict`` is it read through the
    session's threshold."""
    guideline: int | None = None
    """The version of the team's guidelines in force when the person answered (None: the
    session had none then)."""
    answer: Answer | None = None
    """The person's answer, of one of verdict.KINDS (None while pending): read from the stored
    word by ``Label.of_row``."""

    @classmethod
    def of_row(cls, row: Sequence[Any]) -> Label:
        """A label from a row of ``store.rows.columns(Label)``: its last column, the stored
        word, read as the answer it stands for."""
        return cls(*row[:-1], from_stored(row[-1]))  # type: ignore[call-arg]


@dataclass(frozen=True, slots=True)
class Guideline:
    """One version of the team's guidelines, stored whole (``annotator guidelines``)."""

    version: int
    text: str
    sha256: str
    source: str | None
    """The file it was read from, as given."""
    set_by: str | None
    set_at: str


@dataclass(frozen=True, slots=True)
class Undone:
    """What an undo reverted: the chunk, and its verdict before and after the undo."""

    chunk_id: int
    golden_id: str
    undone: Answer | None
    """The answer that was taken back."""
    restored: Answer | None
    """The answer in force again (None: the chunk is pending again)."""


@dataclass(frozen=True, slots=True)
class ImportSummary:
    """What importing one file changed."""

    path: str
    goldens_read: int
    goldens_added: int
    goldens_replaced: int
    verdicts_added: int
    labels_added: int

    @property
    def changed_nothing(self) -> bool:
        """True when the file was already in the session exactly."""
        return not (
            self.goldens_added or self.goldens_replaced or self.verdicts_added or self.labels_added
        )


@dataclass(frozen=True, slots=True)
class GoldLabel:
    """The label an adjudicator settled on where people disagreed, and who decided it."""

    chunk_id: int
    verdict: int
    decided_by: str
    note: str | None
    decided_at: str


@dataclass(frozen=True, slots=True)
class ReviewTotals:
    """One person's totals for the annotation header, read in one snapshot."""

    chunks: dict[str, int]
    """Golden id -> its number of chunks."""
    decided: dict[str, int]
    """Golden id -> how many of its chunks the person has decided."""
    pairs: dict[tuple[int, int], int]
    """(person's verdict, judge's verdict) -> how many chunks carry that pair."""
    event_id: int
    """The newest event in the snapshot: later decisions are not counted in it."""


@dataclass(frozen=True, slots=True)
class MergeFacts:
    """What a merged session holds, as the merge reports it."""

    goldens: int
    judges: list[str]
    annotators: list[str]
    labels: int
    """Answered labels in force (unsure ones count)."""
    conflicts: dict[tuple[str, str, int], list[tuple[Answer | None, str | None, str]]]
    """(annotator, golden id, rank) -> every version (verdict, note, when), oldest first."""
    gold_conflicts: int


GRADE_NAMES = {0: "irrelevant", 1: "related", 2: "highly relevant", 3: "perfectly relevant"}
"""The UMBRELA / TREC deep-learning track's names for the grades of a 0-3 scale."""


@dataclass(frozen=True)
class Scale:
    """A session's grades: 0 to ``top``, relevant from ``relevant_from``."""

    top: int
    relevant_from: int

    def __post_init__(self) -> None:
        if not 1 <= self.top <= 9:
            raise ValueError(f"a scale runs 0 to 1-9, not 0 to {self.top}")
        if not 1 <= self.relevant_from <= self.top:
            raise ValueError(f"relevant from must be 1 to {self.top}, not {self.relevant_from}")

    @classmethod
    def parse(cls, text: str, relevant_from: int | None = None) -> Scale:
        """A scale from '0-3' (relevant from 2 on a 0-3 scale, else from half-way up)."""
        low, dash, high = text.partition("-")
        if not dash or low.strip() != "0" or not high.strip().isdigit():
            raise ValueError(f"write a scale as 0-N (e.g. 0-3), not {text!r}")
        top = int(high)
        return cls(top, relevant_from if relevant_from is not None else default_threshold(top))

    def name(self, grade: int) -> str:
        """A grade's name on a 0-3 scale (TREC's words), else the number."""
        return GRADE_NAMES.get(grade, str(grade)) if self.top == 3 else str(grade)

    def verdict(self, grade: int) -> int:
        """The grade read as a verdict."""
        return int(grade >= self.relevant_from)


def default_threshold(top: int) -> int:
    """Where relevance starts by default: 2 on a 0-3 scale (TREC DL's binary relevance), the
    middle grade of others (1 on 0-1 and 0-2)."""
    return min(top, max(1, (top + 1) // 2))


CANDIDATE_MARK = "~align"
"""In a judge's name, what marks an align candidate: NAME~alignRUN.ROUND.NUMBER, judged on the
splits while a run decides, never a judge of its own (a kept one is renamed)."""


def is_candidate(judge: str) -> bool:
    """Whether a judge name is an align run's temporary candidate."""
    return CANDIDATE_MARK in judge
