"""Gullibility probes: how often the judge calls a chunk made to fool it useful."""

from __future__ import annotations

from typing import Any

from annotator.report.blocks import Block
from annotator.report.cells import probe_grid
from annotator.report.inputs import Inputs
from annotator.report.jsonparts import probes_dict
from annotator.report.model import Report
from annotator.report.section import Section
from annotator.scoring.probes import probe_rates, rates_sentence
from annotator.stats.bootstrap import Estimates


def blocks(report: Report) -> list[Block]:
    """The probe rates, one column a kind."""
    if not report.probes:
        return []
    return [probe_grid("probes", [(report.judge, {r.kind: r for r in report.probes})])]


def json(report: Report) -> dict[str, Any]:
    """The probes object."""
    return {"probes": probes_dict(report.probes)}


def headline(report: Report) -> list[str]:
    """How often the probes fooled the judge."""
    if not report.probes:
        return []
    return [rates_sentence(report.judge, {r.kind: r for r in report.probes})]


def data(inputs: Inputs, _: Estimates, __: None) -> dict[str, Any]:
    """The judge's rates on each kind of probe it was tested with."""
    return {"probes": list(probe_rates(inputs.session, inputs.judge).get(inputs.judge,
                                                                         {}).values())}


SECTION = Section("probes", blocks, json, headline, data=data)
