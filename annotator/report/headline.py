"""The few sentences a person needs to decide whether to trust the judge, from the report."""

from __future__ import annotations

from typing import TYPE_CHECKING

from annotator.probes import rates_sentence
from annotator.stats.stat import Stat, number
from annotator.text import counted

if TYPE_CHECKING:
    from annotator.report.model import ErrorSection, ErrorSlice, Report


def interval_text(stat: Stat, digits: int = 2, percent: bool = False) -> str:
    """'0.52 (95% CI 0.31 to 0.70)', or 'undefined (reason)' (see Stat.format)."""
    return stat.format(digits, interval=True, percent=percent)


def _bias(bias: Stat, resamples: int) -> str:
    """Which way the judge moves mean CP, said firmly only when the interval excludes 0."""
    amount = bias.value or 0.0  # defined whenever a golden is complete
    if number(amount) == number(0.0):
        return "the judge gives the same mean"
    way = "overstates" if amount > 0 else "understates"
    if bias.interval is None:
        why = ("'annotator report --bootstrap 2000' gives one" if not resamples else
               "too few complete goldens for one; finish more goldens")
        return (f"the judge's is {number(abs(amount))} {'higher' if amount > 0 else 'lower'}, "
                f"with no interval to tell that from chance ({why})")
    low, high = bias.interval
    interval = f"bias 95% CI {number(low, sign=True)} to {number(high, sign=True)}"
    if low > 0 or high < 0:
        return f"the judge {way} it by {number(abs(amount))} ({interval})"
    return (f"the difference, {number(amount, sign=True)}, is within chance ({interval}): "
            "no sign the judge over- or understates it")


def who(report: Report) -> str:
    """'alice', 'alice and bob', or 'nobody yet'."""
    if not report.annotators:
        return "nobody yet"
    if len(report.annotators) == 1:
        return report.annotators[0]
    return ", ".join(report.annotators[:-1]) + " and " + report.annotators[-1]


def headline(report: Report) -> list[str]:
    """The headline sentences, most important first."""
    c, g = report.chunks, report.goldens
    people = who(report)
    if c.confusion.n == 0:
        label = f"a label from {people}" if report.annotators else "a person's label yet"
        return [f"No chunk has both a verdict from judge '{report.judge}' and {label}: "
                "annotate some goldens first ('annotator annotate "
                f"{report.session} --judge {report.judge}')."]
    cov = report.coverage
    pooled = len(report.annotators) > 1  # each person-chunk pair counts
    on = (f"{counted(c.confusion.n, 'label')} ({counted(cov.distinct_chunks, 'chunk')} from "
          f"{counted(cov.from_goldens, 'golden')})" if pooled else
          f"{counted(c.confusion.n, 'chunk')} from {counted(cov.from_goldens, 'golden')}")
    lines = [
        f"Judge '{report.judge}' against {people} on {on}: agreement "
        f"{interval_text(c.stats['percent'], 2, True)}, "
        f"Cohen's kappa {interval_text(c.stats['cohen_kappa'])}, Gwet's AC1 "
        f"{interval_text(c.stats['gwet_ac1'])}.",
    ]
    p = c.mcnemar.cluster_p
    test = (f" (cluster-adjusted McNemar p = {p.value:.3f})" if p.value is not None else "")
    lines.append(c.direction.rstrip(".") + test + ".")
    if g.goldens:
        complete = (f"{counted(g.goldens, 'person-golden pair')} ("
                    f"{counted(cov.distinct_complete, 'golden')})" if pooled
                    else counted(g.goldens, "golden"))
        lines.append(
            f"Over {complete} complete under both label sets, mean context precision is "
            f"{g.stats['mean_human'].format(4)} under human labels and "
            f"{g.stats['mean_judge'].format(4)} under the judge's: "
            f"{_bias(g.stats['bias'], report.resamples)}.")
        changes = len(g.verdict_changes)
        lines.append(
            f"At pass mark {report.pass_mark:g}, {interval_text(g.stats['pass_rate_human'], 2, True)}"
            f" of goldens pass under human labels and "
            f"{interval_text(g.stats['pass_rate_judge'], 2, True)} under the judge's; "
            f"{counted(changes, 'golden')} {'changes' if changes == 1 else 'change'} verdict.")
    else:
        waiting = sum(a.goldens_unsure for a in report.coverage.annotators)
        lines.append("No golden is complete under both label sets yet, so context precision "
                     "cannot be compared: " + (
                         f"{counted(waiting, 'golden')} {'waits' if waiting == 1 else 'wait'} "
                         "for an adjudicator to settle an unsure chunk ('annotator annotate "
                         f"{report.session} --adjudicate')." if waiting else "finish whole goldens."))
    if c.note:
        lines.append(c.note)
    if report.top_k is not None and (pick := report.top_k.smallest.get(None)) is not None:
        k_human, k_judge = pick
        if k_human is not None and k_judge is not None:
            lines.append(
                f"Cutting to the top k: people's labels keep {report.top_k.keep:.0%} of the "
                f"relevant chunks from k = {k_human}, the judge's from k = {k_judge}: " + (
                    "the judge would choose the same k." if k_human == k_judge else
                    f"the judge would choose {'a smaller' if k_judge < k_human else 'a larger'}"
                    " k."))
    if report.reranking and (every := report.reranking[0]).captured.value is not None:
        lines.append(_reranking(every.retrieved.value, every.judge.value, every.ceiling.value,
                                every.captured))
    if report.systems is not None:
        swapped = report.systems.swapped
        if swapped:
            lines.append(f"Ranking {report.systems.key} values: "
                         f"{counted(len(swapped), 'pair')} swap between label sets ("
                         + "; ".join(f"{s.first} vs {s.second}" for s in swapped) + ").")
        else:
            lines.append(f"Both label sets rank the {report.systems.key} values the same way.")
        systems = report.systems
        if systems.best_human != systems.best_judge:
            lines.append(f"The judge would pick a different best {systems.key}: "
                         f"{systems.best_judge}, where people's labels pick "
                         f"{systems.best_human}.")
        for pair in systems.separated:
            sees, misses = (("people's labels", "the judge's verdicts") if pair.significant_human
                            else ("the judge's verdicts", "people's labels"))
            lines.append(f"Only {sees} tell {pair.first} and {pair.second} apart (the 95% "
                         f"interval of their difference excludes 0); {misses} do not.")
    if report.errors is not None:
        lines.extend(_error_findings(report.errors))
    if report.probes:
        lines.append(rates_sentence(report.judge, {r.kind: r for r in report.probes}))
    for row in report.people.annotators:
        if row.warning:
            lines.append(f"{row.annotator}: {row.warning}")
    team = report.raters
    if team is not None and None not in (team.stats["light_kappa"].value,
                                         team.stats["judge_mean_kappa"].value):
        lines.append(team.ceiling)
    if (design := report.design) is not None and (
            best := design.stats["ppi_plus_plus"]).value is not None:
        low, high = best.interval or (best.value, best.value)
        lines.append(f"Mean CP under the {design.design} sample ({design.labelled} goldens "
                     f"labelled): {best.value:.4f} (95% CI {low:.4f} to {high:.4f}), against "
                     f"{design.stats['judge_only'].format(4)} from the judge alone" + (
                         "; the target width is reached." if design.more == 0 else
                         f"; about {design.more:,} more goldens for +-{design.target:g}."))
    if report.ppi is not None and (best := report.ppi.stats["ppi_plus_plus"]).value is not None:
        judge = report.ppi.stats["judge_only"]
        low, high = best.interval or (best.value, best.value)
        lines.append(f"Bias-corrected mean CP (PPI++, {report.ppi.labelled} goldens drawn at "
                     f"random): {best.value:.4f} (95% CI {low:.4f} to {high:.4f}), against "
                     f"{judge.format(4)} from the judge alone.")
    return lines


MAX_FINDINGS = 3
"""The headline names at most this many slices where the judge errs more (the table has all)."""


def _error_findings(errors: ErrorSection) -> list[str]:
    """A sentence for each slice where the judge errs more than elsewhere, surest first."""
    found = sorted(((p, e, error) for e in errors.slices
                    for error, finding, p in (("fp", e.fp_finding, e.fp_p),
                                              ("fn", e.fn_finding, e.fn_p))
                    if finding == "higher" and p is not None), key=lambda t: t[0])
    lines = []
    for _, e, error in found[:MAX_FINDINGS]:
        rate, rest = (e.fp_rate, e.fp_rest) if error == "fp" else (e.fn_rate, e.fn_rest)
        which = _slice_words(e)
        said = (f"The judge calls {which} useful too often: false-positive rate" if error == "fp"
                else f"The judge calls {which} noise too often: false-negative rate")
        lines.append(f"{said} {interval_text(rate)} against {rest.format(2)} on the other "
                     f"chunks (Holm-corrected over {counted(errors.tests, 'comparison')}).")
    if len(found) > MAX_FINDINGS:
        lines.append(f"{counted(len(found) - MAX_FINDINGS, 'more slice')} where the judge errs "
                     "more: see 'Where the judge errs'.")
    return lines


def _slice_words(e: ErrorSlice) -> str:
    """Which chunks a slice holds, in words: 'long chunks (980-2,400 chars)'."""
    if e.dimension == "length":
        size = "long " if e.last else "short " if e.first else ""
        return f"{size}chunks ({e.label})"
    if e.dimension == "overlap":
        share = "most" if e.last else "few" if e.first else "some"
        return f"chunks sharing {share} of the question's words ({e.label})"
    if e.dimension == "rank":
        return f"chunks at {e.label}"
    return f"chunks of {e.dimension} {e.label}"


def _share(stat: Stat) -> str:
    """A share's interval as percentages, in brackets ('' without one)."""
    if stat.interval is None:
        return ""
    low, high = stat.interval
    return f" (95% CI {low:.0%} to {high:.0%})"


def _reranking(retrieved: float | None, judged: float | None, ceiling: float | None,
               captured: Stat) -> str:
    """The judge as a reranker in one sentence: a share of the way to the ceiling only when it
    is one (0-100%); an order that makes CP worse, or overshoots, said as what it is."""
    move = f"the judge would take mean CP from {retrieved:.4f} to {judged:.4f}"
    share = captured.value or 0.0
    if share < 0:
        return (f"As a reranker of these chunks, {move}: its order makes CP worse than the "
                f"retriever's (a perfect reranker reaches {ceiling:.4f}){_share(captured)}.")
    if share > 1:
        return (f"As a reranker of these chunks, {move}, past the {ceiling:.4f} people's own "
                f"order reaches{_share(captured)}.")
    return (f"As a reranker of these chunks, {move}, {share:.0%} of the way to the "
            f"{ceiling:.4f} a perfect reranker reaches{_share(captured)}.")
