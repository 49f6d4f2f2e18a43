"""Where the judge errs: false-positive and false-negative rates by slice of the compared chunks
(rank, length, overlap with the question, system), each against the rest, Holm-corrected."""

from __future__ import annotations

from typing import Any

from annotator.report.blocks import Block, Grid
from annotator.report.cells import interval_text, value, with_interval
from annotator.report.jsonparts import stats_dict
from annotator.report.model import ErrorSection, ErrorSlice, Report
from annotator.report.section import Section
from annotator.stats.multiple import ALPHA
from annotator.stats.slices import MIN_TESTED
from annotator.text import counted

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


SECTION = Section("errors", blocks, json, headline)
