"""TREC out of a session: qrels (the truth on each chunk) and a run (each golden's chunks in
their retrieved order) written for trec_eval and ir_measures (an IR collection comes in through
annotator/intake/trec.py).

- A query is a golden and a document is one of its chunks, named by the chunk's own id where
  the goldens file gave one (``retrieved_context_ids``: the team's document or passage id),
  else by the golden's id and the chunk's rank (``g17#3``): names that survive a merge, since
  a merge keeps ids and ranks.
  TREC files are split on whitespace, so whitespace and ``%`` in an id are written as
  ``%20``-style escapes (``urllib.parse.quote``); ``#`` too, so the name reads back unambiguously.
- The qrels hold only a golden's own chunks, so a query's relevant documents are the relevant
  chunks retrieved for it. Average precision is then RAGAS's context precision of the golden:
  both divide by the number of relevant chunks in its list (pooling chunks of several systems
  under one query would divide by the pool's, and change the figure).
- A run names each golden's system (its metadata value under the grouping key) as the run tag;
  ``system`` keeps one system's goldens, one run per system as trec_eval expects.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO
from urllib.parse import quote

import numpy as np

from annotator.columns import MISSING, ChunkFrame
from annotator.errors import SessionError
from annotator.resolve import one_judge
from annotator.scoring.grouping import system_values
from annotator.scoring.truth import truth as team_or_person
from annotator.store.session import Session

NO_SYSTEM = "cp-annotator"
"""The run tag of goldens whose metadata names no system."""


def query_id(golden_id: str) -> str:
    """A golden's id as a TREC query id (one token)."""
    return quote(golden_id, safe="")


def doc_id(golden_id: str, rank: int) -> str:
    """A chunk's TREC document id: its golden's id and its rank."""
    return f"{query_id(golden_id)}#{rank}"


def _rows(session: Session, frame: ChunkFrame) -> Iterator[tuple[str, int, int, str]]:
    """(golden id, rank, row of the frame, document id) of every chunk, golden by golden: the
    chunk's own id where it has one (escaped, so it never reads as another chunk's ``g17#3``;
    a golden's own ids are distinct, formats checks), else its golden's id and rank."""
    ids = frame.golden_ids
    own = session.chunk_doc_ids()
    for row, (cluster, rank, chunk_id) in enumerate(zip(
            frame.cluster.tolist(), frame.rank.tolist(), frame.chunk_id.tolist(), strict=True)):
        golden_id = ids[cluster]
        name = own.get(chunk_id)
        yield golden_id, rank, row, (doc_id(golden_id, rank) if name is None
                                     else quote(name, safe=""))


def relevance(session: Session, frame: ChunkFrame, truth: str, annotator: str | None
              ) -> np.ndarray:
    """The relevance the qrels give each chunk of the frame (MISSING: unjudged): 'human' (the
    team's truth, or ``annotator``'s labels), 'gold' (adjudicated labels only), or a judge's
    verdicts. On a graded session a person's or a judge's grade is written where it has one
    (graded qrels, as they came in)."""
    graded = session.scale() is not None
    if truth == "human":
        found = team_or_person(session, annotator, frame)
        people = session.annotators()
        person = annotator or (people[0] if len(people) == 1 else None)
        if not graded or person is None:
            return found.verdict
        return _graded(found.verdict, session.label_columns(person, frame).grade)
    if truth == "gold":
        return session.gold_column(frame)
    try:
        judge = one_judge(session.judges_judged(), truth)
    except SessionError as error:
        raise SessionError(f"--truth takes 'human', 'gold' or a judge's name. {error}") from None
    assert judge is not None  # a name was given
    said = session.judge_columns(judge, frame)
    return _graded(said.verdict, said.grade) if graded else said.verdict


def _graded(verdict: np.ndarray, grade: np.ndarray) -> np.ndarray:
    """The grade where there is one, else the verdict."""
    return np.where(grade != MISSING, grade, verdict).astype(np.int8)


def write_qrels(session: Session, frame: ChunkFrame, verdict: np.ndarray, out: IO[str]) -> int:
    """Write ``qid 0 docid relevance`` for every chunk with a verdict in ``verdict`` (aligned to
    the frame; chunks without one are left unjudged); return the lines written."""
    count = 0
    for golden_id, _, row, name in _rows(session, frame):
        said = int(verdict[row])
        if said != MISSING:
            out.write(f"{query_id(golden_id)} 0 {name} {said}\n")
            count += 1
    return count


def write_run(session: Session, frame: ChunkFrame, out: IO[str], group_by: str | None,
              system: str | None = None) -> int:
    """Write ``qid Q0 docid rank score tag`` for every chunk, in retrieved order (the score
    falls with the rank, so no tie reorders it), tagged with its golden's system; ``system``:
    only that system's goldens. Returns the lines written."""
    group_by, systems = system_values(session, group_by)
    if system is not None and system not in set(systems.values()):
        known = ", ".join(sorted(set(systems.values()))) or "none"
        raise SessionError(f"No golden has '{group_by}' = '{system}' (the systems are: "
                           f"{known}); name one of them with --system, or choose the key with "
                           "--group-by.")
    count = 0
    sizes = frame.sizes
    for golden_id, rank, row, name in _rows(session, frame):
        tag = systems.get(golden_id, NO_SYSTEM)
        if system is not None and tag != system:
            continue
        score = int(sizes[frame.cluster[row]]) - rank + 1
        out.write(f"{query_id(golden_id)} Q0 {name} {rank} {score} "
                  f"{quote(tag, safe='')}\n")
        count += 1
    return count
