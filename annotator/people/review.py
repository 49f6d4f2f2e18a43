"""One person reviewing one judge's verdicts: the annotation logic, with no UI in it.

The annotation screen is a thin shell over :class:`Review`: every key calls one method here,
which writes the decision through the session (committed before it returns) and moves on.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from annotator.columns import MISSING
from annotator.errors import NotHeld, NotSaved, SessionError
from annotator.lazy import np
from annotator.models import CHECKS_MIN, Action, Chunk, Golden, Label, ReviewTotals, StoredVerdict
from annotator.people.assignment import NothingLeft, Quota, lapsed, nothing_left, taken
from annotator.resolve import judge_named, one_judge
from annotator.scoring.checks import Check, is_turn, next_check
from annotator.scoring.checks import load as load_checks
from annotator.scoring.gate import gating
from annotator.stats.chunk_agreement import Confusion
from annotator.stats.comparison import GoldenComparison
from annotator.stats.metrics import context_precision_by_golden
from annotator.store.session import Session
from annotator.verdict import UNSURE, Answer, flipped, from_stored, kind_named, kind_of
from annotator.verdict import name as verdict_name

if TYPE_CHECKING:
    from annotator.report.model import Report

ChunkState = Literal["pending", "accepted", "flipped", "set", "imported", "unsure"]


def is_blind(session_id: str, annotator: str, chunk_id: int, rate: float) -> bool:
    """Whether a chunk is labelled blind: a reproducible draw seeded by session and annotator."""
    if rate <= 0:
        return False
    digest = hashlib.sha256(f"{session_id}:{annotator}:{chunk_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < rate


@dataclass(frozen=True, slots=True)
class ChunkView:
    """What the screen shows for one chunk."""

    chunk: Chunk
    verdict: StoredVerdict | None
    label: Label | None
    blind: bool

    @property
    def hidden(self) -> bool:
        """The judge's verdict is hidden: a blind chunk not yet answered."""
        return self.blind and (self.label is None or (
            self.label.blind_verdict is None and self.label.verdict is None))

    @property
    def decision(self) -> int | None:
        """The person's verdict, if decided."""
        return None if self.label is None else self.label.verdict

    @property
    def answer(self) -> Answer | None:
        """The person's answer: a verdict, unsure, or None while pending."""
        return None if self.label is None else self.label.answer

    @property
    def state(self) -> ChunkState:
        """pending, accepted, flipped, set, imported or unsure."""
        if self.label is not None and self.label.answer == UNSURE:
            return "unsure"
        if self.label is None or self.label.verdict is None or self.label.action is None:
            return "pending"
        return {"accept": "accepted", "flip": "flipped", "set": "set",
                "import": "imported"}[self.label.action]  # type: ignore[return-value]


@dataclass(frozen=True, slots=True)
class QueueRow:
    """One golden in the queue: how far the person is, and CP both ways once complete."""

    number: int
    """Its place in the review, from 1."""
    golden_id: str
    chunks: int
    decided: int
    cp_human: float | None
    cp_judge: float | None
    disagreements: int
    has_note: bool
    others: dict[str, int] = field(default_factory=dict)
    """Everyone else who has started this golden -> chunks they have decided."""

    @property
    def others_text(self) -> str:
        """How far the others are: "bob 3/5, carol done" (never their labels)."""
        return ", ".join(f"{name} {'done' if n == self.chunks else f'{n}/{self.chunks}'}"
                         for name, n in self.others.items())

    @property
    def state(self) -> str:
        """complete / started / pending."""
        if self.decided == self.chunks:
            return "complete"
        return "started" if self.decided else "pending"


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a key did, for the status line; ``ok`` is False when nothing was written."""

    ok: bool
    message: str = ""


class Review:
    """The state of one person's review: which golden and chunk, and the running totals."""

    PAGE = 500
    """Goldens asked about at once while looking for the next unfinished one."""

    def __init__(self, session: Session, annotator: str, judge: str | None, *,
                 blind_rate: float = 0.0, pass_mark: float = 0.7,
                 only: Sequence[str] | None = None, count: bool = True,
                 checks: Sequence[Check] = (), check_rate: float = 0.0,
                 checks_min: float = CHECKS_MIN, quota: Quota | None = None) -> None:
        if not annotator.strip():
            raise SessionError("The annotator's name is empty; pass --annotator NAME.")
        if judge is not None:
            judge_named(session.judges_judged(), judge)
        if not 0.0 <= blind_rate <= 1.0:
            raise SessionError("--blind-rate must be between 0 and 1, e.g. 0.15.")
        if not 0.0 <= check_rate <= 1.0:
            raise SessionError("--checks must be between 0 and 1, e.g. 0.05.")
        self.session = session
        self.annotator = annotator
        self.judge = judge
        self.blind_rate = blind_rate
        self.pass_mark = pass_mark
        self.scale = session.scale()
        """A graded session's scale: the digit keys give grades (None: binary, 1 and 0)."""
        self.ranked = not session.unranked()
        """False on an unranked pool: no P@k and no CP on the screen."""
        self.session_id = session.session_id
        self.golden_ids = session.golden_ids()
        if not self.golden_ids:
            raise SessionError(f"{session.where} holds no goldens yet; import some with "
                               f"'annotator import FILE --session {session.where}'.")
        self.sampled = only is not None
        stored = session.random_sample() if only is not None else None
        self.sample: dict[str, Any] | None = (
            stored if stored is not None and stored["golden_ids"] == list(only or []) else None)
        self.design = (self.sample.get("design", "uniform") if self.sample is not None
                       else "random")
        """The design of the sample shown ('random' for goldens given without a stored one)."""
        self.stopping = ""
        """The sample's stopping rule after the last completed golden (annotator.scoring.sampling)."""
        self._judge_cp: dict[str, float] = {}
        if only is not None:
            # A random sample: only its goldens, in the sample's own random order, so the
            # goldens labelled so far are a random subset too.
            existing = set(self.golden_ids)
            self.golden_ids = [g for g in only if g in existing]
        self._at = {golden_id: i for i, golden_id in enumerate(self.golden_ids)}
        # The running totals for the header. Reading them takes a pass over the session, so a
        # screen reads them in a worker (count() then apply()) and paints the golden first;
        # until then totals_known is False. Each decision then moves them by one.
        self.totals_known = False
        self._closing = False
        self.chunk_counts: dict[str, int] = {}
        self.decided_counts: dict[str, int] = {}
        self.total_chunks = self.chunks_decided = self.goldens_complete = 0
        self.overall = Confusion()
        self._counting = False
        self._latest_verdict = session.latest_verdict_id()
        self._since: list[tuple[int, str, Answer | None, Answer | None, int | None]] = []
        """Decisions made while a count is being read: (event id, golden, old, new, judge)."""
        self.index = 0
        self.cursor = 0
        self._selected_at = time.monotonic()
        self.golden: Golden
        self.verdicts: dict[int, StoredVerdict] = {}
        self.labels: dict[int, Label] = {}
        self._revealed: bool | None = None
        """After a blind answer on the chunk under the cursor: whether its golden was complete
        before it (the next j moves on from there as any decision would); else None."""
        self.checks = list(checks)
        self.check_rate = check_rate
        self.checks_min = checks_min
        self.check: Check | None = None
        """The attention check on screen (annotator.scoring.checks), shown as any golden; else None."""
        self._after_check = 0
        """The golden to open once the check on screen is answered."""
        self._completed_here = 0
        """Goldens completed in this sitting: when a check comes is drawn on this count."""
        self.quota = quota
        """With --per-golden: each golden goes to at most so many people, each holding the one
        on their screen by a lease (annotator.people.assignment); None: everyone sees all."""
        if count:
            self.apply(self.count())
        self.open(*self._start())
        self.gated = gating(session, annotator)
        """Under the session's qualification gate (scoring/gate.py): this person answers check
        chunks first, before any golden, until they have answered the gate's number."""
        if self.gated:
            if not self.checks:
                self.checks = load_checks(session)
            self._gate_check()

    # -- the running totals ---------------------------------------------------------------------

    def count(self) -> ReviewTotals:
        """Read the totals (one snapshot). Through its own connection, so a screen may call it
        from a worker thread; decisions made meanwhile are carried over by apply(). Raises
        ReadStopped once stop_counting() was called."""
        self._counting = True
        with self.session.another() as session:
            session.stop_when(lambda: self._closing)
            return session.review_totals(self.annotator, self.judge)

    def stop_counting(self) -> None:
        """Cut short a count() under way in another thread, and any later one: the screen is
        closing, and a person who quits does not wait for totals they will never see."""
        self._closing = True

    def includes(self, golden_id: str) -> bool:
        """Whether a golden is in this review (a sample holds only some)."""
        return golden_id in self._at

    def apply(self, totals: ReviewTotals) -> None:
        """Take the totals read by count(), then replay the decisions made since its snapshot."""
        self.chunk_counts = {g: n for g, n in totals.chunks.items() if self.includes(g)}
        self.decided_counts = {g: n for g, n in totals.decided.items() if self.includes(g)}
        self.total_chunks = sum(self.chunk_counts.values())
        self.chunks_decided = sum(self.decided_counts.values())
        self.goldens_complete = sum(1 for g in self.golden_ids if self.is_complete(g))
        pairs = totals.pairs
        self.overall = Confusion(tp=pairs.get((1, 1), 0), fp=pairs.get((0, 1), 0),
                                 fn=pairs.get((1, 0), 0), tn=pairs.get((0, 0), 0))
        self.totals_known = True
        self._counting = False
        since, self._since = self._since, []
        for event_id, golden_id, old, new, judge in since:
            if event_id > totals.event_id:
                self._move_totals(golden_id, old, new, judge)

    # -- loading ----------------------------------------------------------------------------------

    def _start(self) -> tuple[int, int | None]:
        """Where the person stopped: the golden they were on when they left, at its first
        pending chunk, or at the chunk they were on when none is pending (session files from
        before positions were kept: the golden of their last decision if unfinished), else the
        first unfinished golden."""
        position = self.session.position(self.annotator)
        if position is not None and self.includes(position[0]):
            golden_id, rank = position
            return (self._at[golden_id],
                    rank - 1 if self.is_complete(golden_id) else None)
        last = self.session.last_decided_golden(self.annotator)
        if last is not None and self.includes(last) and not self.is_complete(last):
            return self._at[last], None
        first = self._next_unfinished(-1)
        return (first if first != -1 else 0), None

    def open(self, index: int, cursor: int | None = None, *, step: int = 1,
             unfinished: bool = False, only: bool = False) -> None:
        """Show the golden at ``index``; the cursor goes to its first pending chunk. Under a
        quota, the golden is claimed first: one other people fill (or, with ``unfinished``, one
        this person has completed) is passed over, walking by ``step`` (with ``only``, never:
        that golden or none); NothingLeft when every golden is passed over."""
        index %= len(self.golden_ids)
        if self.quota is not None:
            claimed = self._claim_from(index, step, unfinished, only)
            if claimed != index:  # another golden than asked for: start at its first pending
                index, cursor = claimed, None
        self.index = index
        self.check = None
        golden_id = self.golden_ids[self.index]
        self.golden = self.session.golden(golden_id)
        self.reload()
        self.select(self._first_pending() if cursor is None else cursor)
        self.remember_position()

    def _claim_from(self, index: int, step: int, unfinished: bool, only: bool = False) -> int:
        """The first golden from ``index`` (by ``step``) this person can claim, claimed."""
        assert self.quota is not None
        if only:
            if self.session.claim(self.golden_ids[index], self.annotator, self.quota.per_golden,
                                  self.quota.lease_s):
                return index
            raise NothingLeft(taken(self.golden_ids[index], self.quota))
        full = self.session.full_goldens(self.annotator, self.quota.per_golden)
        n = len(self.golden_ids)
        for i in ((index + k * step) % n for k in range(n)):
            golden_id = self.golden_ids[i]
            if golden_id in full or (unfinished and self.is_complete(golden_id)):
                continue
            if self.session.claim(golden_id, self.annotator, self.quota.per_golden,
                                  self.quota.lease_s):
                return i
        raise NothingLeft(nothing_left(self.quota, n))

    def _quota_terms(self) -> dict[str, Any]:
        """What a decision tells the session of the quota (nothing without one)."""
        if self.quota is None:
            return {}
        return {"per_golden": self.quota.per_golden, "lease_s": self.quota.lease_s}

    def renew(self) -> Outcome | None:
        """Keep this person's claim on the golden on screen while they read (a screen calls it
        every minute); an Outcome saying so when the claim had lapsed and others took the
        golden meanwhile. A busy file is tried again at the next call."""
        if self.quota is None or self.check is not None:
            return None
        try:
            if self.session.claim(self.golden.id, self.annotator, self.quota.per_golden,
                                  self.quota.lease_s):
                return None
        except NotSaved:
            return None
        return Outcome(False, lapsed(self.golden.id, self.quota))

    def leave(self) -> None:
        """Let go of the golden this person has not finished, for others to take (a screen
        calls it when it closes; a screen that dies lets its lease lapse instead)."""
        if self.quota is not None:
            with contextlib.suppress(NotSaved):
                self.session.release_claims(self.annotator)

    def _first_pending(self) -> int:
        """The first chunk of the golden on screen the person has not answered (else 0)."""
        return next((i for i, view in enumerate(self.chunk_views()) if view.answer is None), 0)

    def remember_position(self) -> None:
        """Store the golden and chunk under the cursor, so the next visit reopens there (a
        convenience: skipped while another command holds the file). On a check, the golden it
        comes before."""
        golden_id, rank = ((self.golden_ids[self._after_check], 1) if self.check is not None
                           else (self.golden.id, self.cursor + 1))
        with contextlib.suppress(NotSaved):
            self.session.set_position(self.annotator, golden_id, rank)

    def refresh_verdicts(self) -> bool:
        """Pick up verdicts a judge stored since the last look (it may run in another process).

        Returns True when something new arrived, so the screen knows to redraw (and to count
        the totals again).
        """
        latest = self.session.latest_verdict_id()
        if latest == self._latest_verdict:
            return False
        self._latest_verdict = latest
        if self.judge is None:
            # Opened before any judge had verdicts: take the first one to store some, as
            # opening the screen now would (several at once: the person picks on reopening).
            with contextlib.suppress(SessionError):
                self.judge = one_judge(self.session.judges_judged(), None, required=False)
        self.reload()
        # The overall agreement moves with the new verdicts: the screen reads the totals again
        # in a worker (count, apply), showing the ones it has meanwhile.
        return True

    def reload(self) -> None:
        """Read the current golden's verdicts and labels again (a judge may be running)."""
        if self.check is not None:
            self.verdicts = self.check.stored_verdicts(self.judge)
            self.labels = self._check_labels(self.check)
            return
        ids = [self.golden.id]
        self.verdicts = self.session.verdicts(self.judge, ids) if self.judge else {}
        self.labels = self.session.labels(self.annotator, ids)

    # -- reading ----------------------------------------------------------------------------------

    def chunk_views(self) -> list[ChunkView]:
        """The current golden's chunks, as the screen shows them."""
        return [ChunkView(c, self.verdicts.get(c.id), self.labels.get(c.id),
                          is_blind(self.session_id, self.annotator, c.id, self.blind_rate))
                for c in self.golden.chunks]

    @property
    def selected(self) -> ChunkView:
        """The chunk under the cursor."""
        return self.chunk_views()[self.cursor]

    QUEUE_FIRST = 250
    """Goldens in the queue's first page: its first rows arrive after these, not the session."""
    QUEUE_PAGE = 2000
    """Goldens the queue reads at once after the first page."""

    def queue(self) -> Iterator[list[QueueRow]]:
        """Every golden of this review as a queue row, judge against this person, in order, a
        page at a time.

        Reads through its own connection, so a screen may call it from a worker thread.
        """
        with self.session.another() as session:
            starts = [0, *range(self.QUEUE_FIRST, len(self.golden_ids), self.QUEUE_PAGE)]
            for start, end in zip(starts, [*starts[1:], len(self.golden_ids)], strict=True):
                if start >= end:
                    continue
                frame = session.chunk_frame(self.golden_ids[start:end])
                said = (session.judge_columns(self.judge, frame, whole=False).verdict
                        if self.judge else np.full(len(frame), MISSING, dtype=np.int8))
                labels = session.label_columns(self.annotator, frame, whole=False)
                human = labels.verdict
                both = (human != MISSING) & (said != MISSING)
                columns = (frame.sizes.tolist(), frame.per_golden(labels.answered).tolist(),
                           context_precision_by_golden(human, frame.sizes).tolist(),
                           context_precision_by_golden(said, frame.sizes).tolist(),
                           frame.per_golden(both & (human != said)).tolist(),
                           frame.per_golden(labels.note).tolist())
                others = session.others_progress(self.annotator, frame.golden_ids)
                yield [QueueRow(start + i + 1, golden_id, int(chunks), int(decided),
                                None if math.isnan(cp_h) else cp_h,
                                None if math.isnan(cp_j) else cp_j, int(disagree), noted > 0,
                                others.get(golden_id, {}))
                       for i, (golden_id, chunks, decided, cp_h, cp_j, disagree, noted)
                       in enumerate(zip(frame.golden_ids, *columns, strict=True))]

    def report(self) -> Report:
        """The agreement report for this person and judge, without the bootstrap (so it is
        quick); the same report 'annotator report' prints. Safe from a worker thread, as queue."""
        from annotator.report.build import build_report

        with self.session.another() as session:
            return build_report(session, judge=self.judge, annotators=[self.annotator],
                                pass_mark=self.pass_mark, resamples=0,
                                checks_min=self.checks_min)

    def comparison(self) -> GoldenComparison:
        """The current golden, judge versus person, as the screen may show it.

        Verdicts on blind chunks not yet answered are left out (as if not judged): precision@k
        and CP under the judge would otherwise give them away.
        """
        hidden = {v.chunk.id for v in self.chunk_views() if v.hidden}
        verdicts = {c: v for c, v in self.verdicts.items() if c not in hidden}
        return GoldenComparison.of(self.golden, verdicts, self.labels)

    def is_complete(self, golden_id: str) -> bool:
        """Whether the person has decided every chunk of a golden."""
        if golden_id in self.chunk_counts:
            return self.decided_counts.get(golden_id, 0) == self.chunk_counts[golden_id]
        chunks, decided = self.session.progress(self.annotator, [golden_id]).get(golden_id, (0, 0))
        return decided == chunks

    def _count_decided(self, golden_id: str, delta: int) -> None:
        """One more (or one fewer) decided chunk in a golden, and the totals that follow."""
        was_complete = self.is_complete(golden_id)
        self.decided_counts[golden_id] = self.decided_counts.get(golden_id, 0) + delta
        self.chunks_decided += delta
        self.goldens_complete += self.is_complete(golden_id) - was_complete

    # -- moving -----------------------------------------------------------------------------------

    def select(self, cursor: int) -> None:
        """Put the cursor on a chunk (clamped) and start timing the decision."""
        self.cursor = max(0, min(cursor, len(self.golden.chunks) - 1))
        self._selected_at = time.monotonic()
        self._revealed = None

    def move(self, delta: int) -> Outcome | None:
        """Move the cursor within the golden. Down from a chunk just answered blind keeps the
        answer and moves on as a decision does (to the next golden after its last pending
        chunk), with what that says; None when it only moved."""
        if delta > 0 and self._revealed is not None:
            return self._move_on(self._revealed)
        self.select(self.cursor + delta)
        return None

    def _moved(self, index: int, *, step: int = 1, unfinished: bool = False,
               only: bool = False) -> Outcome | None:
        """Open a golden as a key asks (see open): None once it is open; an Outcome when the
        person may take none now, or the file was busy; under the gate, the next check
        instead (a newcomer answers the gate's checks before any golden)."""
        if self.gated and self._gate_check():
            return Outcome(True)
        try:
            self.open(index, step=step, unfinished=unfinished, only=only)
        except NothingLeft as error:
            return Outcome(False, str(error))
        except NotSaved as busy:
            return Outcome(False, f"Not saved: {busy}")
        return None

    def next_golden(self) -> Outcome:
        """The next golden in order; past the last, the first again, said on the status line."""
        was = self.index
        if (refused := self._moved(self.index + 1)) is not None:
            return refused
        wrapped = self.index <= was
        return Outcome(True, f"That was the last of {len(self.golden_ids):,} goldens: back to "
                             "the first." if wrapped and len(self.golden_ids) > 1 else "")

    def previous_golden(self) -> Outcome:
        """The previous golden in order; before the first, the last, said on the status line."""
        was = self.index
        if (refused := self._moved(self.index - 1, step=-1)) is not None:
            return refused
        wrapped = self.index >= was
        return Outcome(True, f"That was the first of {len(self.golden_ids):,} goldens: on to "
                             "the last." if wrapped and len(self.golden_ids) > 1 else "")

    def take_next(self) -> Outcome:
        """The next golden this person has not completed (and, under a quota, can take)."""
        following = self._next_unfinished(self.index)
        if following == self.index and self.is_complete(self.golden_ids[following]):
            return Outcome(False, "Every golden is complete.")
        return self._moved(following, unfinished=True) or Outcome(True)

    def go_to(self, golden_id: str) -> Outcome:
        """Show the golden with this id (under a quota, only one this person can claim)."""
        return self._moved(self._at[golden_id], only=True) or Outcome(True)

    def _next_unfinished(self, after: int) -> int:
        n = len(self.golden_ids)
        order = [(after + step) % n for step in range(1, n + 1)]
        if self.totals_known:
            return next((i for i in order if not self.is_complete(self.golden_ids[i])), after)
        # Before the totals are read: ask the session a page of goldens at a time.
        for start in range(0, n, self.PAGE):
            page = [self.golden_ids[i] for i in order[start:start + self.PAGE]]
            progress = self.session.progress(self.annotator, page)
            for index, golden_id in zip(order[start:start + self.PAGE], page, strict=True):
                chunks, decided = progress.get(golden_id, (0, 0))
                if decided < chunks:
                    return index
        return after

    # -- deciding ---------------------------------------------------------------------------------

    def accept(self) -> Outcome:
        """Take the judge's verdict on the selected chunk."""
        view = self.selected
        if (refused := self.needs_shown_verdict(view)) is not None:
            return refused
        assert view.verdict is not None
        # Accepting a graded judge's verdict takes its grade too.
        grade = view.verdict.grade if self.scale is not None else None
        return self._decide(view, view.verdict.verdict, "accept", grade=grade)

    def flip(self) -> Outcome:
        """Take the opposite of the judge's verdict on the selected chunk."""
        view = self.selected
        if (refused := self.needs_shown_verdict(view)) is not None:
            return refused
        assert view.verdict is not None
        return self._decide(view, flipped(view.verdict.verdict), "flip")

    def set(self, value: int) -> Outcome:
        """Set the verdict yourself (on a graded session, the grade, read through the session's
        threshold): the only way on a blind chunk, which it then reveals."""
        scale = self.scale
        if scale is None:
            if value not in (0, 1):
                return Outcome(False, "Not saved: this session is binary: 1 useful, 0 noise.")
            return self._decide(self.selected, value, "set")
        if not 0 <= value <= scale.top:
            return Outcome(False, f"Not saved: grades run 0 to {scale.top} here.")
        return self._decide(self.selected, scale.verdict(value), "set", grade=value)

    def answer_as(self, word: str, note: str | None = None) -> Outcome:
        """Answer the selected chunk with a kind of answer other than the judge's verdict, by
        its word (verdict.KINDS): "unsure" (you cannot tell: no verdict, a note saying why, the
        chunk waits for an adjudicator; a blind chunk stays blind), "distractor" (noise that
        misleads: on topic, plausible, wrong for this question; it counts as noise and the
        report gives its rate), and any kind added there."""
        kind = kind_named(word)
        if kind.needs_note and not (note or "").strip():
            return Outcome(False, f"Not saved: an {kind.word} answer needs a note saying "
                                  f"{kind.asks}.")
        return self._decide(self.selected, kind.answer,
                            None if kind.verdict is None else "set",
                            note=(note or "").strip() or None)

    def reason_wrong(self, note: str | None = None) -> Outcome:
        """Accept the judge's verdict on the selected chunk but mark its reason wrong (a note
        saying what is wrong is optional)."""
        view = self.selected
        if (refused := self.needs_shown_verdict(view)) is not None:
            return refused
        assert view.verdict is not None
        return self._decide(view, view.verdict.verdict, "accept", reason_wrong=True,
                            note=(note or "").strip() or None)

    def needs_shown_verdict(self, view: ChunkView) -> Outcome | None:
        """Why the judge's verdict on a chunk cannot be accepted or flipped (None: it can)."""
        if view.verdict is None:
            return Outcome(False, "The judge has no verdict on this chunk yet: set yours with "
                                  "1 (useful) or 0 (noise).")
        if view.hidden:
            return Outcome(False, "This chunk is blind: answer with 1 (useful) or 0 (noise) "
                                  "first; the judge's verdict is shown after.")
        return None

    def _decide(self, view: ChunkView, verdict: Answer, action: Action | None, *,
                reason_wrong: bool = False, note: str | None = None,
                grade: int | None = None) -> Outcome:
        elapsed_ms = (time.monotonic() - self._selected_at) * 1000
        if self.check is not None:
            return self._answer_check(view, verdict, note)
        # An answer that is no verdict (unsure) is no answer to a blind chunk: its judge's
        # verdict stays hidden.
        blind = kind_of(verdict).verdict if view.hidden else None
        blind_answer = blind is not None
        judge_verdict = None if view.verdict is None else view.verdict.verdict
        was_complete = self.is_complete(self.golden.id)
        try:
            label = self.session.decide(
                self.annotator, view.chunk.id, verdict, action, judge=self.judge,
                shown_verdict=None if view.hidden else judge_verdict,
                blind_verdict=blind,
                decision_ms=round(elapsed_ms, 1), reason_wrong=reason_wrong, note=note,
                grade=grade, **self._quota_terms())
        except NotSaved as busy:  # nothing changed: the chunk stays as it was
            return Outcome(False, f"Not saved: {busy}")
        except NotHeld:
            assert self.quota is not None
            return Outcome(False, lapsed(self.golden.id, self.quota))
        self._recount(self.golden.id, view.answer, label.answer, judge_verdict)
        self.labels[view.chunk.id] = label
        if blind_answer:
            # Stay: the person sees the judge's verdict now and may still change theirs.
            self._selected_at = time.monotonic()
            self._revealed = was_complete
            if judge_verdict is None:
                return Outcome(True, "Answered. The judge has no verdict on this chunk yet.")
            said = verdict_name(judge_verdict)
            agree = "agrees with you" if judge_verdict == verdict else "disagrees"
            return Outcome(True, f"Revealed: the judge says {said} ({agree}). Keep yours with j, "
                                 "or change it with a, f, 1 or 0.")
        return self._move_on(was_complete)

    def _recount(self, golden_id: str, old: Answer | None, new: Answer | None,
                 judge: int | None) -> None:
        """Move the running totals from one answer of the person's to another (None: none),
        on a chunk the judge said ``judge`` about (None: no verdict)."""
        if self._counting:
            self._since.append((self.session.last_event_id, golden_id, old, new, judge))
        if self.totals_known or self._counting:
            self._move_totals(golden_id, old, new, judge)

    def _move_totals(self, golden_id: str, old: Answer | None, new: Answer | None,
                     judge: int | None) -> None:
        if (old is None) != (new is None) and golden_id in self.chunk_counts:
            self._count_decided(golden_id, +1 if new is not None else -1)
        if judge is not None:  # an answer with no verdict (unsure) is in no cell of the table
            if old is not None and (was := kind_of(old).verdict) is not None:
                self.overall = self.overall - Confusion.of([(was, judge)])
            if new is not None and (now := kind_of(new).verdict) is not None:
                self.overall = self.overall + Confusion.of([(now, judge)])

    def _move_on(self, was_complete: bool) -> Outcome:
        views = self.chunk_views()
        if was_complete:  # revising a finished golden: just step down
            self.select(self.cursor + 1)
            return Outcome(True)
        order = list(range(self.cursor + 1, len(views))) + list(range(self.cursor))
        pending = [i for i in order if views[i].answer is None]
        if pending:
            self.select(pending[0])
            return Outcome(True)
        done = self.comparison()
        message = f"{self.golden.id} complete: CP {_cp(done.cp_human())} (you) vs " \
                  f"{_cp(done.cp_judge())} (judge)."
        if self.sample is not None and self.judge is not None and self.check is None:
            from annotator.scoring.sampling import stopping_text

            self.stopping = stopping_text(self.session, self.sample, self.judge,
                                          self.annotator, self._judge_cp)
            if self.stopping:
                message += f" Sample: {self.stopping}."
        if self.check is not None:  # an attention check, answered: on to where it stood
            return _then(message, self._moved(self._after_check, unfinished=True))
        following = self._next_unfinished(self.index)
        if following == self.index:  # this golden, just finished, was the last unfinished one
            return Outcome(True, message + " Every golden is complete.")
        self._completed_here += 1
        if self.checks and is_turn(self.session_id, self.annotator, self._completed_here,
                                   self.check_rate):
            check = next_check(self.session, self.annotator, self.checks)
            if check is not None:
                self._open_check(check, following)
                return Outcome(True, message)
        # Under a quota, the next golden this person may take (or why none).
        return _then(message, self._moved(following, unfinished=True))

    # -- attention checks (annotator.scoring.checks) ------------------------------------------------------

    @property
    def place(self) -> int:
        """The golden's place in the review, from 0, as the header shows it: a check takes the
        place of the golden it comes before, so nothing tells it apart."""
        return self._after_check if self.check is not None else self.index

    def _gate_check(self) -> bool:
        """Under the gate, open the next check while the person has check chunks to answer
        (the golden on screen waits behind it); False once they have answered enough, or
        every check."""
        self.gated = gating(self.session, self.annotator)
        if not self.gated:
            return False
        check = next_check(self.session, self.annotator, self.checks)
        if check is None:
            return False
        self._open_check(check, self._after_check if self.check is not None else self.index)
        return True

    def _open_check(self, check: Check, after: int) -> None:
        """Show a check as any golden; ``after`` is the golden to open once it is answered."""
        self.check, self._after_check = check, after
        self.golden = check.golden
        self.reload()
        self.select(self._first_pending())

    def _check_labels(self, check: Check) -> dict[int, Label]:
        """This person's answers on a check, as labels for the screen (they are not labels)."""
        out = {}
        for (_, rank), row in self.session.check_answers(self.annotator, check.id).items():
            verdict = row["answer"]
            out[check.golden.chunks[rank - 1].id] = Label(
                check.golden.chunks[rank - 1].id, self.annotator, verdict,
                None if verdict is None else "set" if row["shown_verdict"] is None
                else "accept" if verdict == row["shown_verdict"] else "flip",
                None, row["shown_verdict"], self.judge, row["note"], None, row["answered_at"],
                answer=from_stored(row["word"]))
        return out

    def _answer_check(self, view: ChunkView, verdict: Answer, note: str | None) -> Outcome:
        """Keep an answer on a check chunk apart from labels (never counted), and move on."""
        assert self.check is not None
        rank = view.chunk.rank
        was_complete = all(v.answer is not None for v in self.chunk_views())
        try:
            self.session.answer_check(
                self.annotator, self.check.id, rank, truth=self.check.truth[rank - 1],
                answer=verdict, shown_verdict=None if view.hidden or view.verdict is None
                else view.verdict.verdict, note=note)
        except NotSaved as busy:
            return Outcome(False, f"Not saved: {busy}")
        self.reload()
        return self._move_on(was_complete)

    def undo(self) -> Outcome:
        """Revert this person's last decision (in any golden) and show that chunk; on a check,
        their last answer on it first."""
        if self.check is not None:
            try:
                rank = self.session.undo_check(self.annotator, self.check.id)
            except NotSaved as busy:
                return Outcome(False, f"Not undone: {busy}")
            if rank is not None:
                self.reload()
                self.select(rank - 1)
                return Outcome(True, f"Undone: rank {rank} of {self.golden.id} is pending again.")
        try:
            undone = self.session.undo(self.annotator)
        except NotSaved as busy:
            return Outcome(False, f"Not undone: {busy}")
        if undone is None:
            return Outcome(False, "Nothing to undo.")
        golden_id = undone.golden_id
        judge = (said.verdict if self.judge and (said := self.session.verdicts(
            self.judge, [golden_id]).get(undone.chunk_id)) else None)
        if not self.includes(golden_id):
            self._recount(golden_id, undone.undone, undone.restored, judge)
            return Outcome(True, f"Undone: your last decision, on golden {golden_id}, which is "
                                 "not in this sample.")
        if golden_id != self.golden.id or self.check is not None:  # a check is left too
            self.check = None
            self.index = self._at[golden_id]
            self.golden = self.session.golden(golden_id)
        self.reload()
        new = undone.restored
        self._recount(golden_id, undone.undone, new, judge)
        rank = next(c.rank for c in self.golden.chunks if c.id == undone.chunk_id)
        self.select(rank - 1)
        state = verdict_name(new)
        return Outcome(True, f"Undone: rank {rank} of {golden_id} is {state} again.")

    def comment(self, note: str | None) -> Outcome:
        """Set (or clear) the person's comment on the selected chunk."""
        chunk = self.selected.chunk
        try:
            if self.check is not None:
                self.session.note_check(self.annotator, self.check.id, chunk.rank,
                                        self.check.truth[chunk.rank - 1], note)
            else:
                self.session.set_note(self.annotator, chunk.id, note)
        except NotSaved as busy:
            return Outcome(False, f"Comment not saved: {busy}")
        self.reload()
        return Outcome(True, "Comment saved." if note else "Comment removed.")


def _then(message: str, refused: Outcome | None) -> Outcome:
    """A decision's outcome (it is stored whatever follows), with why the screen did not move
    on when it did not."""
    if refused is None or refused.ok:
        return Outcome(True, message)
    return Outcome(True, f"{message} {refused.message}")


def _cp(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"
