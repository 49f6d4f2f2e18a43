"""The report's sections, each in a file of its own (report/section.py says what one is).

SECTIONS is the order a person reads the report in; the JSON document and the headline keep
the orders they always had (report.serialize.JSON_ORDER, report.headline.HEADLINE_ORDER), and
a section they do not name comes after the ones they do. A section imports no other section
(an import contract holds it).
"""

from __future__ import annotations

from annotator.report.section import Section
from annotator.report.sections import (
    chunks,
    confidence,
    coverage,
    design,
    distractors,
    dropped,
    errors,
    gate,
    goldens,
    grades,
    guidelines,
    people,
    ppi,
    probes,
    raters,
    reasons,
    reranking,
    systems,
    top_k,
)

SECTIONS: tuple[Section, ...] = (
    coverage.SECTION,
    chunks.SECTION,
    grades.SECTION,
    distractors.SECTION,
    goldens.SECTION,
    systems.SECTION,
    top_k.SECTION,
    reranking.SECTION,
    errors.SECTION,
    probes.SECTION,
    reasons.SECTION,
    people.SECTION,
    gate.SECTION,
    guidelines.SECTION,
    raters.SECTION,
    ppi.SECTION,
    design.SECTION,
    confidence.SECTION,
    dropped.SECTION,
)
"""Every section, in reading order."""


def ordered(first: tuple[str, ...]) -> list[Section]:
    """The sections named in ``first``, in that order, then every other in reading order."""
    by_id = {s.id: s for s in SECTIONS}
    return [by_id[i] for i in first] + [s for s in SECTIONS if s.id not in first]
