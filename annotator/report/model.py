"""The agreement report as plain data: what every renderer (table, JSON, Markdown, HTML) reads.

Each section's data type lives in its section's file (report/sections/), beside its build and
its presentation; ``Report`` holds each section's data. Statistics are :class:`Stat` values
(None with a reason when undefined, an interval where the bootstrap gave one), grouped in
ordered ``dict[str, Stat]`` maps whose keys are the JSON keys and whose display names are in
:data:`LABELS`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from annotator.report.sections.chunks import ChunkSection
    from annotator.report.sections.confidence import ConfidenceSection
    from annotator.report.sections.coverage import Coverage
    from annotator.report.sections.distractors import DistractorSection
    from annotator.report.sections.errors import ErrorSection
    from annotator.report.sections.goldens import GoldenSection
    from annotator.report.sections.grades import GradeSection
    from annotator.report.sections.people import PeopleSection
    from annotator.report.sections.reasons import ReasonCheck
    from annotator.report.sections.reranking import RerankRow
    from annotator.report.sections.systems import SystemSection
    from annotator.report.sections.top_k import TopKSection
    from annotator.scoring.probes import ProbeRate
    from annotator.stats.designs import DesignSection
    from annotator.stats.ppi import PpiEstimate
    from annotator.stats.raters import RaterAgreement

LABELS: dict[str, str] = {
    "percent": "percent agreement",
    "cohen_kappa": "Cohen's kappa",
    "gwet_ac1": "Gwet's AC1",
    "krippendorff_alpha": "Krippendorff's alpha (nominal)",
    "precision": "judge precision",
    "recall": "judge recall",
    "f1": "judge F1",
    "prevalence_human": "relevant, human labels",
    "prevalence_judge": "relevant, judge labels",
    "mean_human": "mean CP, human labels",
    "mean_judge": "mean CP, judge labels",
    "bias": "bias (judge - human)",
    "mae": "mean |judge - human|",
    "rmse": "RMSE",
    "limits_low": "Bland-Altman lower limit",
    "limits_high": "Bland-Altman upper limit",
    "pearson": "Pearson r",
    "spearman": "Spearman rho",
    "kendall": "Kendall tau-b",
    "systems_tau_b": "systems' ranking, tau-b",
    "rerank_retrieved": "mean CP as retrieved",
    "rerank_ceiling": "mean CP in people's order",
    "rerank_judge": "mean CP in the judge's order",
    "rerank_captured": "share of the reranking gain the judge captures",
    "systems_tau_ap": "systems' ranking, tau_AP_b",
    "reason_wrong": "reasons marked wrong (of accepted)",
    "check_accuracy": "accuracy on attention checks",
    "ccc": "Lin's CCC",
    "share_big_difference": "share with |difference| > 0.1",
    "pass_rate_human": "pass rate, human labels",
    "pass_rate_judge": "pass rate, judge labels",
    "brier": "Brier score",
    "log_loss": "log loss",
    "ece_class1": "ECE (class-1)",
    "ece_top_label": "ECE (top-label)",
    "auroc": "AUROC",
    "alpha_people": "Krippendorff's alpha, people",
    "distractor_rate": "distractor rate, human labels",
    "grade_kappa": "Cohen's kappa on grades",
    "kappa_linear": "weighted kappa, linear",
    "kappa_quadratic": "weighted kappa, quadratic",
    "alpha_ordinal": "Krippendorff's alpha, ordinal",
    "alpha_interval": "Krippendorff's alpha, interval",
    "alpha_nominal": "Krippendorff's alpha, nominal (grades)",
    "gwet_ac2": "Gwet's AC2 (quadratic weights)",
    "alpha_with_judge": "Krippendorff's alpha, people and judge",
    "fleiss_kappa": "Fleiss' kappa (chunks every person labelled)",
    "light_kappa": "Light's kappa (mean pairwise Cohen's kappa)",
    "judge_mean_kappa": "judge against each person, mean Cohen's kappa",
    "ppi_plus_plus": "PPI++ (judge corrected by the sample)",
    "ppi": "PPI (lambda = 1)",
    "human_only": "people only (the sample)",
    "judge_only": "judge only (biased; no interval)",
    "pass_rate_ppi": "pass rate, PPI++",
    "fp_rate": "judge false-positive rate per chunk",
    "fn_rate": "judge false-negative rate per chunk",
    "acceptance_rate": "acceptance rate",
    "median_decision_ms": "median decision time (ms)",
}


@dataclass(frozen=True, slots=True)
class Report:
    """Everything ``annotator report`` says about one judge against one or more annotators:
    what it was made from, its headline, and each section's data by the section's id."""

    session: str
    judge: str
    annotators: list[str]
    pass_mark: float
    resamples: int
    seed: int | None
    convention: str
    headline: list[str]
    sections: dict[str, Any]
    """Section id -> what its ``data`` made (report/sections/: each section's type is there)."""
    target_width: float = 0.03
    """The half-width on mean CP a sample aims at."""
    unranked: bool = False
    """The chunks are a pool with no order: CP and everything needing an order left out."""

    # Typed views of each section's data, for what reads a section from outside it (the
    # headline, the screens, the tests); a section's own file reads ``sections`` or these.

    @property
    def coverage(self) -> Coverage:
        """How much is judged, labelled and compared."""
        return cast("Coverage", self.sections["coverage"])

    @property
    def chunks(self) -> ChunkSection:
        """Chunk-level agreement, human = truth, relevant = positive."""
        return cast("ChunkSection", self.sections["chunks"])

    @property
    def goldens(self) -> GoldenSection | None:
        """CP per golden compared; None on an unranked session (no CP without an order)."""
        return cast("GoldenSection | None", self.sections["goldens"])

    @property
    def systems(self) -> SystemSection | None:
        """Systems ranked both ways, when the goldens name several."""
        return cast("SystemSection | None", self.sections["systems"])

    @property
    def reranking(self) -> list[RerankRow]:
        """Every golden first, then each system's."""
        return cast("list[RerankRow]", self.sections["reranking"])

    @property
    def people(self) -> PeopleSection:
        """Each person against the judge, blind answers, switches."""
        return cast("PeopleSection", self.sections["people"])

    @property
    def confidence(self) -> ConfidenceSection | None:
        """P(relevant) calibrated against people's labels, when verdicts carry one."""
        return cast("ConfidenceSection | None", self.sections["confidence"].section)

    @property
    def confidence_gaps(self) -> dict[str, int]:
        """Why verdicts in force carry no P(relevant) although logprobs were asked for -> how many."""
        return cast("dict[str, int]", self.sections["confidence"].gaps)

    @property
    def reasons(self) -> ReasonCheck:
        """Right verdict, wrong reason: how often people marked the judge's reason wrong."""
        return cast("ReasonCheck", self.sections["reasons"])

    @property
    def dropped_replicates(self) -> dict[str, int]:
        """Bootstrap replicates in which a statistic was undefined (left out of its interval)."""
        return cast("dict[str, int]", self.sections["dropped"])

    @property
    def raters(self) -> RaterAgreement | None:
        """Agreement among everyone who labelled the session, when two or more people did."""
        return cast("RaterAgreement | None", self.sections["raters"])

    @property
    def ppi(self) -> PpiEstimate | None:
        """Mean CP corrected by the random sample of human-labelled goldens, when one was drawn."""
        return cast("PpiEstimate | None", self.sections["ppi"])

    @property
    def top_k(self) -> TopKSection | None:
        """With ``report --top-k`` only (it adds columns for every k to the bootstrap)."""
        return cast("TopKSection | None", self.sections["top_k"])

    @property
    def errors(self) -> ErrorSection | None:
        """Where the judge errs, when some chunk has both a person's label and a verdict."""
        return cast("ErrorSection | None", self.sections["errors"])

    @property
    def design(self) -> DesignSection | None:
        """Mean CP as a stratified or active sample allows (a uniform one gives ``ppi``)."""
        return cast("DesignSection | None", self.sections["design"])

    @property
    def probes(self) -> list[ProbeRate]:
        """The judge's false-positive rate on each kind of gullibility probe it was tested with."""
        return cast("list[ProbeRate]", self.sections["probes"])

    @property
    def grades(self) -> GradeSection | None:
        """Agreement on grades, on a graded session."""
        return cast("GradeSection | None", self.sections["grades"])

    @property
    def distractors(self) -> DistractorSection | None:
        """Distractor rates, once someone called a chunk a distractor."""
        return cast("DistractorSection | None", self.sections["distractors"])
