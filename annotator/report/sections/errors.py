"""Where the judge errs: false-positive and false-negative rates by slice of the compared chunks
(rank, length, overlap with the question, system), each against the rest, Holm-corrected."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from annotator.lexical import content_words, overlap
from annotator.report.blocks import Block, Grid
from annotator.report.cells import interval_text, value, with_interval
from annotator.report.inputs import Columns, Inputs, ratio_of
from annotator.report.jsonparts import stats_dict
from annotator.report.model import Report
from annotator.report.section import Section
from annotator.stats.bootstrap import ClusterSums, Estimates, Sums, column
from annotator.stats.multiple import ALPHA, holm_rejects
from annotator.stats.slices import MIN_TESTED, Bins, quartile_bins, rank_bins, testable, wald_p
from annotator.stats.stat import Stat
from annotator.text import counted


@dataclass(frozen=True, slots=True)
class ErrorSlice:
    """The judge's error rates on one slice of the compared chunks, against every other chunk
    (annotator.stats.slices)."""

    dimension: str
    """'rank', 'length', 'overlap', or the metadata key naming the systems."""
    label: str
    """Which chunks: 'rank 1', '980-2,400 chars', '0%-25% of the question's words', 'bm25'."""
    first: bool
    last: bool
    """Whether this is the dimension's lowest slice, or its highest (its words in sentences)."""
    chunks: int
    fp_rate: Stat
    """The share of the chunks people call noise that the judge calls useful."""
    fn_rate: Stat
    """The share of the chunks people call useful that the judge calls noise."""
    fp_rest: Stat
    fn_rest: Stat
    """The same rates on every compared chunk outside the slice."""
    fp_p: float | None
    fn_p: float | None
    """Two-sided p-values of slice = rest (None: not tested)."""
    fp_finding: str | None
    fn_finding: str | None
    """'higher' or 'lower' than the rest, significant after Holm's correction; else None."""


@dataclass(frozen=True, slots=True)
class ErrorSection:
    """Where the judge errs: its error rates slice by slice, and which slices stand out."""

    slices: list[ErrorSlice]
    tests: int
    """Comparisons with the rest that had a p-value (the family Holm's correction covers)."""


MAX_FINDINGS = 3
"""The headline names at most this many slices where the judge errs more (the table has all)."""


def _stands_out(fp: str | None, fn: str | None) -> str:
    """'more false positives', 'fewer false negatives', both, or ''."""
    said = [f"{'more' if finding == 'higher' else 'fewer'} {what}"
            for finding, what in ((fp, "false positives"), (fn, "false negatives")) if finding]
    return "; ".join(said)


def blocks(report: Report) -> list[Block]:
    """The slices table."""
    if (errors := report.errors) is None:
        return []
    return [Grid(
        "errors", "Where the judge errs: error rates by slice of the compared chunks",
        ["by", "slice", "chunks", "false-positive rate", "rest", "false-negative rate",
         "rest", "stands out"],
        [[e.dimension, e.label, str(e.chunks), with_interval(e.fp_rate, 3),
          value(e.fp_rest, 3, short=True), with_interval(e.fn_rate, 3),
          value(e.fn_rest, 3, short=True), _stands_out(e.fp_finding, e.fn_finding)]
         for e in errors.slices],
        ["False-positive rate: the share of the chunks people call noise that the judge "
         "calls useful; false-negative rate: the share of people's useful chunks it calls "
         "noise. 'rest' is the same rate on every other compared chunk. Length and overlap "
         "(the share of the question's content words found in the chunk) are cut at their "
         "quartiles.",
         f"A slice stands out when its rate differs from the rest's beyond chance: a "
         f"golden-bootstrap test, Holm-corrected over the {counted(errors.tests, 'comparison')}"
         f" made (a rate is tested when the slice and the rest each hold {MIN_TESTED} "
         "chunks of its class)." if errors.tests else
         "No slice was tested: that needs the bootstrap ('--bootstrap 2000') and at least "
         f"{MIN_TESTED} chunks of a class in a slice and in the rest."])]


def json(report: Report) -> dict[str, Any]:
    """The errors object (null with nothing compared)."""
    if (errors := report.errors) is None:
        return {"errors": None}
    return {"errors": {
        "tests": errors.tests, "family_alpha": ALPHA, "correction": "holm",
        "slices": [{"dimension": e.dimension, "slice": e.label, "chunks": e.chunks,
                    **stats_dict({"fp_rate": e.fp_rate, "fp_rate_rest": e.fp_rest,
                                  "fn_rate": e.fn_rate, "fn_rate_rest": e.fn_rest}),
                    "fp_p": e.fp_p, "fn_p": e.fn_p, "fp_finding": e.fp_finding,
                    "fn_finding": e.fn_finding} for e in errors.slices]}}


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


def findings(errors: ErrorSection) -> list[str]:
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


def headline(report: Report) -> list[str]:
    """The slices where the judge errs more than elsewhere."""
    return [] if report.errors is None else findings(report.errors)


ERROR_COUNTS = {"fp": (0, 1), "neg": (0, None), "fn": (1, 0), "pos": (1, None)}
"""An error column's (human label, judge verdict) pairs: false positives among people's noise
(neg), false negatives among people's useful chunks (pos); None: any verdict."""

_EVERY = {"fp": lambda s: s["fp"], "neg": lambda s: s["fp"] + s["tn"],
          "fn": lambda s: s["fn"], "pos": lambda s: s["fn"] + s["tp"]}
"""The error columns' totals over every compared chunk, from the confusion counts."""


def prepare(inputs: Inputs, columns: Columns, sums: ClusterSums) -> list[tuple[str, Bins]]:
    """Slice the compared chunks, and per slice add its golden's false positives, noise
    chunks, false negatives and useful chunks; returns the slicing."""
    pairs = inputs.pairs
    slicing = _slicing(inputs, columns)
    counted_as = {name: (pairs.human == h) & (True if j is None else pairs.judge == j)
                  for name, (h, j) in ERROR_COUNTS.items()}
    for dimension, bins in slicing:
        for code in range(len(bins.labels)):
            mine = bins.code == code
            for name, mask in counted_as.items():
                sums.add(column(f"err_{name}", dimension, code), pairs.cluster[mine & mask])
    return slicing


def _slicing(inputs: Inputs, columns: Columns) -> list[tuple[str, Bins]]:
    """Each compared chunk's slice by rank, length, overlap with its question and (with two
    systems or more) system, as (dimension, bins over the pairs)."""
    pairs, frame, session = inputs.pairs, columns.frame, inputs.session
    if not len(pairs.row):
        return []
    rows = np.unique(pairs.row)
    chars = np.full(len(frame), np.nan)
    shares = np.full(len(frame), np.nan)
    words: dict[str, frozenset[str]] = {}
    questions = session.questions()

    def measured(chunk_id: int, golden_id: str, text: str) -> tuple[int, int, float]:
        if (mine := words.get(golden_id)) is None:
            mine = words[golden_id] = content_words(questions[golden_id])
        return chunk_id, len(text), overlap(mine, text)

    # Straight into arrays: at a million chunks, lists of Python numbers cost 100 MB.
    found = np.fromiter((measured(*row) for row in session.chunk_texts(
        frame.chunk_id[rows].tolist())), dtype=[("id", np.int64), ("chars", float),
                                                 ("share", float)], count=len(rows))
    at = frame.slots(found["id"])
    chars[at] = found["chars"]
    shares[at] = found["share"]
    by_rank = [] if inputs.unranked else [("rank", rank_bins(pairs.rank))]
    slicing = [*by_rank,
               ("length", quartile_bins(chars[pairs.row], lambda x: f"{x:,.0f}", "chars")),
               ("overlap", quartile_bins(shares[pairs.row], lambda x: f"{x:.0%}",
                                         "of the question's words"))]
    if system_of := inputs.system_of:
        names = sorted(set(system_of.values()))
        of_golden = np.asarray([names.index(system_of[g]) if g in system_of else -1
                                for g in frame.golden_ids], dtype=np.int64)
        slicing.append((inputs.systems_key, Bins(of_golden[pairs.cluster], names)))
    return slicing


def _rates(est: Estimates, dimension: str, code: int, error: str, tested: bool
           ) -> tuple[Stat, Stat, float | None]:
    """One slice's false-positive ('fp') or false-negative ('fn') rate, the same rate on every
    other chunk, and the p-value of their difference (None when not ``tested``)."""
    among, whose = ("neg", "noise") if error == "fp" else ("pos", "useful")

    def inside(name: str) -> Callable[[Sums], np.ndarray]:
        return lambda s: s[column(f"err_{name}", dimension, code)]

    def outside(name: str) -> Callable[[Sums], np.ndarray]:
        return lambda s: _EVERY[name](s) - inside(name)(s)

    rate_in, rate_out = ratio_of(inside(error), inside(among)), ratio_of(outside(error),
                                                                          outside(among))
    none = (None if est.totals[column(f"err_{among}", dimension, code)] else
            f"no chunk here is {whose} to people")
    rate = est.stat(column(f"{error}_rate", dimension, code), rate_in, none)
    rest = est.stat(column(f"{error}_rest", dimension, code), rate_out)
    if (not tested or est.replicates is None or rate.value is None or rest.value is None
            or not testable(float(inside(among)(est.totals)), float(outside(among)(est.totals)))):
        return rate, rest, None
    return rate, rest, wald_p(rate.value - rest.value,
                              rate_in(est.replicates) - rate_out(est.replicates))


def data(inputs: Inputs, est: Estimates, slicing: list[tuple[str, Bins]]) -> dict[str, Any]:
    """The judge's error rates per slice, against the rest, with Holm's correction over every
    comparison made (none when no chunk is compared)."""
    if not len(inputs.pairs.cluster):
        return {"errors": None}
    found = []
    for dimension, bins in slicing:
        tested = len(bins.labels) > 1  # one slice has no rest to differ from
        for code, label in enumerate(bins.labels):
            fp, fp_rest, fp_p = _rates(est, dimension, code, "fp", tested)
            fn, fn_rest, fn_p = _rates(est, dimension, code, "fn", tested)
            chunks = sum(int(est.totals[column(f"err_{n}", dimension, code)])
                         for n in ("neg", "pos"))
            found.append(ErrorSlice(dimension, label, code == 0, code == len(bins.labels) - 1,
                                    chunks, fp, fn, fp_rest, fn_rest, fp_p, fn_p, None, None))
    pvalues = [p for row in found for p in (row.fp_p, row.fn_p)]
    significant = iter(holm_rejects(pvalues))

    def finding(rate: Stat, rest: Stat) -> str | None:
        if not next(significant):
            return None
        return "higher" if (rate.value or 0.0) > (rest.value or 0.0) else "lower"

    slices = [replace(row, fp_finding=finding(row.fp_rate, row.fp_rest),
                      fn_finding=finding(row.fn_rate, row.fn_rest)) for row in found]
    return {"errors": ErrorSection(slices, sum(p is not None for p in pvalues))}


SECTION = Section("errors", blocks, json, headline, prepare, data)
