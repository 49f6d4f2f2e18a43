"""Demonstrations for a judge's prompt, drawn from the calibration set's dev split.

Only dev goldens are drawn from (annotator.scoring.unseen keeps the judge off them when it is scored).
The draw is balanced between useful and noise, takes first the chunks where a judge of the
session got it wrong (those teach the most), and within that is random by the seed alone.
A person's note on the chunk is its reason where there is one; a chunk whose judge reason was
marked wrong is never drawn.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence

import numpy as np

from annotator.columns import MISSING
from annotator.errors import SessionError
from annotator.judge.template import Example
from annotator.judge.types import Against
from annotator.scoring.truth import truth
from annotator.store.session import Session
from annotator.text import counted

REASONS = {1: "This chunk supplies information the answer states or needs.",
           0: "This chunk does not help arrive at the answer, even if it is on the topic."}
"""The reason a demonstration gives where the person left no note."""


def draw_examples(session: Session, count: int, seed: int, against: Against,
                  annotator: str | None = None) -> list[Example]:
    """``count`` human-labelled dev chunks as demonstrations (see the module's docstring).

    Raises SessionError without a split, or with fewer labelled dev chunks than asked for.
    """
    splits = session.splits()
    if not splits:
        raise SessionError(
            "--examples draws demonstrations from the dev split, and this session has none: "
            "run 'annotator split SESSION --dev 0.3 --seed 1' first, so the judge is scored "
            "only on the test goldens it never saw.")
    frame = session.chunk_frame()
    said = truth(session, annotator, frame)
    dev = np.asarray([splits.get(g) == "dev" for g in frame.golden_ids], dtype=bool)
    candidates = (said.verdict != MISSING) & dev[frame.cluster]
    # A chunk whose judge reason someone marked wrong carries a note about that reason, not
    # about the chunk: as a demonstration it would teach the wrong reasoning.
    for person in session.annotators():
        candidates &= ~session.label_columns(person, frame).reason_wrong
    erred = np.zeros(len(frame), dtype=bool)
    for judge in session.judge_verdict_counts():
        verdict = session.judge_columns(judge, frame).verdict
        erred |= (verdict != MISSING) & (verdict != said.verdict)
    at = np.flatnonzero(candidates)
    if len(at) < count:
        raise SessionError(
            f"--examples {count} needs that many labelled chunks in the dev split, and it holds "
            f"{counted(len(at), 'labelled chunk')}: label more dev goldens, or ask for fewer.")
    rng = random.Random(seed)
    buckets: dict[tuple[int, bool], list[int]] = {}
    for i in at.tolist():  # frame order, so the draw depends on the seed alone
        buckets.setdefault((int(said.verdict[i]), bool(erred[i])), []).append(i)
    for members in buckets.values():
        rng.shuffle(members)
    by_class = {v: buckets.get((v, True), []) + buckets.get((v, False), []) for v in (1, 0)}
    wanted = {1: (count + 1) // 2, 0: count // 2}
    for v, other in ((1, 0), (0, 1)):  # one class short: the other fills in
        short = wanted[v] - len(by_class[v])
        if short > 0:
            wanted[v] -= short
            wanted[other] += short
    picked = by_class[1][:wanted[1]] + by_class[0][:wanted[0]]
    rng.shuffle(picked)  # no run of one class the model could read as a pattern
    return _examples(session, picked, frame.golden_ids, frame.cluster, frame.rank,
                     said.verdict, against, said.source)


def stored_examples(session: Session, judge: str) -> list[Example] | None:
    """The examples a judge of the session was shown, exactly as shown (so a rerun resumes
    with the same prompt, whatever was labelled or judged since); None for a new judge."""
    examples = session.judge_examples().get(judge)
    defined = next((j for j in session.judges() if j.name == judge), None)
    if not examples or defined is None or not defined.prompt_text:
        return None
    shown = json.loads(defined.prompt_text).get("examples", [])[-len(examples):]
    return [Example(e["question"], e["answer"], e["chunk"], e["verdict"], e["reason"], golden_id,
                    rank) for e, (golden_id, rank, _) in zip(shown, examples, strict=True)]


def _examples(session: Session, picked: Sequence[int], golden_ids: Sequence[str],
              cluster: np.ndarray, rank: np.ndarray, verdict: np.ndarray, against: Against,
              source: str) -> list[Example]:
    wanted = list(dict.fromkeys(golden_ids[cluster[i]] for i in picked))
    goldens = {g.id: g for g in session.goldens(wanted)}
    people = [source] if source in session.annotators() else session.annotators()
    notes: dict[int, str] = {}
    for person in people:
        for chunk_id, label in session.labels(person, wanted).items():
            if label.note and chunk_id not in notes:
                notes[chunk_id] = label.note
    out = []
    for i in picked:
        golden = goldens[golden_ids[cluster[i]]]
        chunk = next(c for c in golden.chunks if c.rank == int(rank[i]))
        answer = golden.reference if against == "reference" else golden.response
        if answer is None:
            continue  # a golden the prompt cannot show: it makes no demonstration
        v = int(verdict[i])
        out.append(Example(golden.user_input, answer, chunk.text, v,
                           notes.get(chunk.id) or REASONS[v], golden.id, chunk.rank))
    return out
