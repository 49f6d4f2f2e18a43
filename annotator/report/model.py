"""The agreement report as plain data: what every renderer (table, JSON, Markdown, HTML) reads.

Statistics are :class:`Stat` values (None with a reason when undefined, an interval where the
bootstrap gave one), grouped in ordered ``dict[str, Stat]`` maps whose keys are the JSON keys
and whose display names are in :data:`LABELS`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from annotator.scoring.probes import ProbeRate
from annotator.stats.chunk_agreement import Confusion, McNemar, rate
from annotator.stats.confidence import ReliabilityBin
from annotator.stats.designs import DesignSection
from annotator.stats.ppi import PpiEstimate
from annotator.stats.raters import RaterAgreement
from annotator.stats.stat import Stat

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
class AnnotatorCoverage:
    """How far one annotator has got."""

    annotator: str
    chunks_decided: int
    goldens_complete: int
    chunks_unsure: int = 0
    """Chunks answered unsure (and not adjudicated): left out of agreement, never a 0 or 1."""
    goldens_unsure: int = 0
    """Goldens with no CP under these labels because one of their chunks is unsure."""


@dataclass(frozen=True, slots=True)
class Coverage:
    """Goldens and chunks in all, judged, and decided."""

    goldens: int
    chunks: int
    chunks_judged: int
    goldens_judged: int
    annotators: list[AnnotatorCoverage]
    compared_chunks: int
    """Chunks with a verdict from the judge and a label from the person (pairs, when pooled)."""
    compared_goldens: int
    """Goldens complete under both label sets (pairs, when several annotators are pooled)."""
    distinct_chunks: int
    """Different chunks among the compared ones (fewer than compared_chunks when pooled)."""
    from_goldens: int
    """Different goldens the compared chunks come from."""
    distinct_complete: int
    """Different goldens among the complete ones (fewer than compared_goldens when pooled)."""


@dataclass(frozen=True, slots=True)
class RankRow:
    """Agreement at one rank position."""

    rank: int
    confusion: Confusion
    stats: dict[str, Stat]


@dataclass(frozen=True, slots=True)
class ChunkSection:
    """Chunk-level agreement, human = truth, relevant = positive."""

    confusion: Confusion
    stats: dict[str, Stat]
    wilson: tuple[float, float] | None
    """Wilson 95% interval on percent agreement, treating chunks as independent."""
    direction: str
    mcnemar: McNemar
    note: str | None
    """Set when kappa and AC1 tell different stories because prevalence is extreme."""
    by_rank: list[RankRow]


@dataclass(frozen=True, slots=True)
class GoldenRow:
    """One golden (for one annotator) complete under both label sets."""

    golden_id: str
    annotator: str
    human: float
    judge: float
    human_verdicts: tuple[int, ...]
    judge_verdicts: tuple[int, ...]
    passes_human: bool
    passes_judge: bool

    @property
    def difference(self) -> float:
        """CP(judge) - CP(human)."""
        return self.judge - self.human


@dataclass(frozen=True, slots=True)
class WorstGolden:
    """A golden with a large |difference|, with its question for the reader."""

    row: GoldenRow
    question: str


@dataclass(frozen=True, slots=True)
class GoldenSection:
    """Context precision per golden under both label sets, and how they agree."""

    goldens: int
    stats: dict[str, Stat]
    per_golden: list[GoldenRow]
    verdict_changes: list[GoldenRow]
    worst: list[WorstGolden]
    no_relevant: dict[str, int]
    """Goldens with no relevant chunk: under both, human only, judge only."""


@dataclass(frozen=True, slots=True)
class GradeSection:
    """Agreement on grades, on a graded session: the chunks both graded, by both."""

    top: int
    """Grades run 0 to top."""
    relevant_from: int
    """The lowest grade read as relevant (for CP and every binary statistic)."""
    names: list[str]
    """Each grade's name (TREC's words on a 0-3 scale)."""
    table: list[list[int]]
    """table[h][j]: chunks people graded h and the judge graded j."""
    stats: dict[str, Stat]
    """GRADED_STATISTICS, each with its golden-bootstrap interval."""
    thresholds: list[list[Stat]]
    """thresholds[a][b]: Cohen's kappa with people relevant from a + 1, the judge from b + 1."""
    best_judge_threshold: int | None
    """The judge's threshold agreeing best with people's at ``relevant_from`` (None: no kappa)."""
    sensitivity: list[tuple[int, Stat, float | None, float | None]]
    """Per threshold t (both sides): kappa, and mean CP under people's and the judge's grades
    (None where undefined, or on an unranked session)."""


@dataclass(frozen=True, slots=True)
class DistractorSection:
    """How often people call a chunk a distractor (noise that misleads), overall, per system
    and per golden; the judge's rate where a judge can say it."""

    rate: Stat
    """Distractors among the chunks people gave a verdict, with its golden-bootstrap interval."""
    judge_rate: Stat
    """The same under the judge's labels (undefined while no judge can say distractor)."""
    chunks: int
    distractors: int
    systems: dict[str, Stat]
    """Each system's rate (with two systems or more)."""
    goldens: list[tuple[str, int, int]]
    """The goldens with the most distractors: (golden id, distractors, chunks with a verdict)."""


@dataclass(frozen=True, slots=True)
class SystemRow:
    """One retriever (or --group-by value): mean CP under both label sets."""

    system: str
    goldens: int
    mean_human: Stat
    mean_judge: Stat
    rank_human: int
    rank_judge: int


@dataclass(frozen=True, slots=True)
class SystemPair:
    """Two systems compared under both label sets (difference = first - second)."""

    first: str
    second: str
    difference_human: Stat
    difference_judge: Stat

    @property
    def swapped(self) -> bool:
        """The two label sets order this pair differently."""
        h, j = self.difference_human.value, self.difference_judge.value
        return h is not None and j is not None and h * j < 0

    @staticmethod
    def _significant(stat: Stat) -> bool | None:
        if stat.interval is None:
            return None
        low, high = stat.interval
        return low > 0 or high < 0

    @property
    def significant_human(self) -> bool | None:
        """Whether the 95% interval of the difference under human labels excludes 0."""
        return self._significant(self.difference_human)

    @property
    def significant_judge(self) -> bool | None:
        """Whether the 95% interval of the difference under judge labels excludes 0."""
        return self._significant(self.difference_judge)


@dataclass(frozen=True, slots=True)
class SystemSection:
    """Systems ranked under both label sets."""

    key: str
    systems: list[SystemRow]
    """In the order people's labels rank them (best first)."""
    kendall: Stat
    """Kendall's tau-b between the two rankings (undefined for two systems: see the pair)."""
    pairs: list[SystemPair]
    tau_ap: Stat
    """tau_AP_b between the judge's ranking and people's (Urbano & Marrero, ICTIR 2017): the
    tie-aware, symmetric form of Yilmaz et al.'s tau_AP (the mean of its two directions), where
    swaps near the top cost more than swaps near the bottom."""

    @property
    def swapped(self) -> list[SystemPair]:
        """Pairs the two label sets order differently."""
        return [p for p in self.pairs if p.swapped]

    @property
    def best_human(self) -> str:
        """The system people's labels rank first."""
        return self.systems[0].system

    @property
    def best_judge(self) -> str:
        """The system the judge's verdicts rank first."""
        return min(self.systems, key=lambda r: r.rank_judge).system

    @property
    def separated(self) -> list[SystemPair]:
        """Pairs one label set tells apart (the difference's 95% interval excludes 0) and the
        other does not: a decision the judge would make differently, or not at all."""
        return [p for p in self.pairs if None not in (p.significant_human, p.significant_judge)
                and p.significant_human != p.significant_judge]


@dataclass(frozen=True, slots=True)
class TopKRow:
    """Goldens cut to their first k chunks, over every golden or one system's, under both
    label sets (annotator.stats.topk)."""

    system: str | None
    """None: every golden."""
    k: int
    cp_human: Stat
    cp_judge: Stat
    precision_human: Stat
    precision_judge: Stat
    lost_human: Stat
    """The share of people's relevant chunks the cut leaves out."""
    lost_judge: Stat
    """The share of the judge's relevant chunks the cut leaves out."""


@dataclass(frozen=True, slots=True)
class TopKSection:
    """How many chunks to keep, and whether the judge would keep as many as people."""

    keep: float
    """The share of relevant chunks a cut must keep."""
    rows: list[TopKRow]
    smallest: dict[str | None, tuple[int | None, int | None]]
    """Per system (None: every golden): the smallest k keeping ``keep`` of the relevant
    chunks under people's labels, and under the judge's."""


@dataclass(frozen=True, slots=True)
class RerankRow:
    """What reordering the chunks could buy, over all goldens or one system's, scored under
    people's labels (annotator.stats.reranking)."""

    system: str | None
    """None: every golden."""
    goldens: int
    retrieved: Stat
    """Mean CP in the retriever's order."""
    ceiling: Stat
    """Mean CP with people's useful chunks first: the most any reranker can reach."""
    judge: Stat
    """Mean CP in the judge's order (its verdict, then its P(relevant), then the rank)."""
    captured: Stat
    """The share of the ceiling's gain over the retrieved order that the judge's order gains."""


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


@dataclass(frozen=True, slots=True)
class AnnotatorRow:
    """One person's behaviour: acceptance, speed, agreement with the judge."""

    annotator: str
    chunks_decided: int
    shown_judge: int
    """Decisions made with the judge's verdict on screen (not blind, not imported)."""
    stats: dict[str, Stat]
    longest_fast_accept_run: int
    warning: str | None
    checks: int = 0
    """Attention-check chunks with a settled truth the person answered 0 or 1."""


@dataclass(frozen=True, slots=True)
class BlindRow:
    """Anchoring: agreement on blind answers versus pre-filled labels."""

    blind_chunks: int
    prefilled_chunks: int
    blind: dict[str, Stat]
    prefilled: dict[str, Stat]
    disagreed_blind: int
    switched_to_judge: int
    switch_rate: Stat


@dataclass(frozen=True, slots=True)
class PeopleSection:
    """Per-annotator behaviour and, where there are blind labels, anchoring."""

    annotators: list[AnnotatorRow]
    blind: BlindRow | None


@dataclass(frozen=True, slots=True)
class ConfidenceSection:
    """Calibration of the judge's P(relevant) against human labels."""

    chunks: int
    stats: dict[str, Stat]
    ece_conventions: dict[str, str]
    bins: list[ReliabilityBin]


@dataclass(frozen=True, slots=True)
class ReasonCheck:
    """How often people who accepted the judge's verdict marked its reason wrong."""

    accepted: int
    """Verdicts accepted with the judge's reason on screen."""
    wrong: int
    """Of those, the ones whose reason was marked wrong."""

    @property
    def rate(self) -> Stat:
        """The share of accepted verdicts whose reason was marked wrong (Wilson 95%)."""
        return rate(self.wrong, self.accepted, "no verdict of this judge was accepted yet")


@dataclass(frozen=True, slots=True)
class Report:
    """Everything ``annotator report`` says about one judge against one or more annotators."""

    session: str
    judge: str
    annotators: list[str]
    pass_mark: float
    resamples: int
    seed: int | None
    convention: str
    coverage: Coverage
    chunks: ChunkSection
    goldens: GoldenSection | None
    """None on an unranked session (no CP without an order)."""
    systems: SystemSection | None
    reranking: list[RerankRow]
    """Every golden first, then each system's."""
    people: PeopleSection
    confidence: ConfidenceSection | None
    headline: list[str]
    dropped_replicates: dict[str, int] = field(default_factory=dict)
    """Bootstrap replicates in which a statistic was undefined (left out of its interval)."""
    raters: RaterAgreement | None = None
    """Agreement among everyone who labelled the session, when two or more people did."""
    ppi: PpiEstimate | None = None
    """Mean CP corrected by the random sample of human-labelled goldens, when one was drawn."""
    confidence_gaps: dict[str, int] = field(default_factory=dict)
    """Why verdicts in force carry no P(relevant) although logprobs were asked for -> how many."""
    top_k: TopKSection | None = None
    """With ``report --top-k`` only (it adds columns for every k to the bootstrap)."""
    errors: ErrorSection | None = None
    """Where the judge errs, when some chunk has both a person's label and a verdict."""
    design: DesignSection | None = None
    """Mean CP as a stratified or active sample allows (a uniform one gives ``ppi``)."""
    target_width: float = 0.03
    """The half-width on mean CP a sample aims at."""
    probes: list[ProbeRate] = field(default_factory=list)
    """The judge's false-positive rate on each kind of gullibility probe it was tested with."""
    reasons: ReasonCheck = ReasonCheck(0, 0)
    """Right verdict, wrong reason: how often people marked the judge's reason wrong."""
    grades: GradeSection | None = None
    """Agreement on grades, on a graded session."""
    distractors: DistractorSection | None = None
    """Distractor rates, once someone called a chunk a distractor."""
    unranked: bool = False
    """The chunks are a pool with no order: CP and everything needing an order left out."""
    sections: dict[str, Any] = field(default_factory=dict)
    """Section id -> the data of a section whose data type lives in its own file (a section
    added since the report held each section's data in a field of its own; see section.py)."""
