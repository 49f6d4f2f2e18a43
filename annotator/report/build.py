"""Build the agreement report from a session file: one judge against one or more annotators.

The session's columns are read once (report/inputs.py); each section of ``SECTIONS`` adds its
columns to the per-golden sums, the cluster bootstrap (goldens resampled, never chunks) runs
once over them all as a few matrix products, and each section then makes its part of the
``Report`` from the estimates.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from annotator.memory import give_back
from annotator.models import CHECKS_MIN
from annotator.report.epochs import epochs_of, recheck_words, span_sentence
from annotator.report.headline import headline
from annotator.report.inputs import Options, gather
from annotator.report.model import Report
from annotator.report.sections import SECTIONS
from annotator.resolve import one_judge
from annotator.scoring.unseen import unseen
from annotator.stats.bootstrap import ClusterSums, Estimates, add_confusion
from annotator.stats.designs import DEFAULT_TARGET
from annotator.stats.metrics import CONVENTION_RAGAS
from annotator.store.session import Session
from annotator.text import counted


def choose_judge(session: Session, judge: str | None) -> str:
    """The judge asked for (which must exist), or the only one (see annotator.resolve)."""
    chosen = one_judge(session.judges_judged(), judge)
    assert chosen is not None  # required: no judge raises
    return chosen


def build_report(
    session: Session,
    *,
    judge: str | None = None,
    annotators: Sequence[str] | None = None,
    pass_mark: float = 0.7,
    resamples: int = 2000,
    seed: int | None = 0,
    group_by: str | None = None,
    worst: int = 10,
    gold: bool = False,
    top_k: bool = False,
    keep_share: float = 0.95,
    target_width: float = DEFAULT_TARGET,
    checks_min: float = CHECKS_MIN,
    relevant_from: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> Report:
    """The agreement report for one judge against the given annotators (default: everyone), or
    with ``gold`` against the team's gold labels (adjudicated, else what everyone agrees on);
    ``top_k`` adds the cut to the first k chunks, for every k, and the smallest k keeping
    ``keep_share`` of the relevant chunks; a person below ``checks_min`` on attention checks
    is warned of; on a graded session, ``relevant_from`` reads grades through another
    threshold than the session's."""
    judge = choose_judge(session, judge)
    options = Options(pass_mark, worst, gold, tuple(annotators or ()), top_k, keep_share,
                      target_width, checks_min, group_by, relevant_from)
    scope = unseen(session, [judge], "test")  # a judge shown examples: the test split only
    inputs, columns = gather(session, judge, scope.golden_ids, options)
    sums = ClusterSums(len(inputs.golden_ids))
    pairs = inputs.pairs
    add_confusion(sums, pairs.cluster, pairs.human, pairs.judge)  # most sections read these
    made = {section.id: section.prepare(inputs, columns, sums) for section in SECTIONS}
    # The session's columns are done with: let them go before the bootstrap's weights arrive.
    del columns
    give_back()
    estimates = Estimates(sums, resamples, seed, progress)
    sections: dict[str, Any] = {}
    for section in SECTIONS:
        sections.update(section.data(inputs, estimates, made[section.id]))
    report = Report(session=session.where, judge=judge, annotators=inputs.names,
                    pass_mark=pass_mark, resamples=resamples, seed=seed,
                    convention=CONVENTION_RAGAS, headline=[], sections=sections,
                    target_width=target_width, unranked=inputs.unranked)
    report.headline.extend(headline(report))
    epochs = epochs_of(session, judge)
    if (span := span_sentence(epochs)) is not None:
        report.headline.append(span)
    if epochs.last_recheck is not None:
        report.headline.append(f"Judge '{judge}' is read as epoch {epochs.read}; "
                               f"{recheck_words(epochs)} ('annotator recheck --history').")
    if scope.golden_ids is not None:
        left = session.count_goldens() - len(scope.golden_ids)
        report.headline.insert(min(1, len(report.headline)), (
            f"Scored on the test split only: {counted(left, 'golden')} left out, since judge "
            f"'{judge}' was shown chunks of dev goldens as examples and a judge is never scored "
            "on what it learned from."))
    return report


__all__ = ["build_report", "choose_judge"]
