"""The report laid out as titled paragraphs and tables: one layout, rendered by every text format.

The Rich table, Markdown and HTML renderers only turn these blocks into their own markup, so
all three always say the same thing in the same order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from annotator.probes import KIND_WORDS, KINDS, ProbeRate
from annotator.report import columns
from annotator.report.headline import who
from annotator.report.model import LABELS, GoldenRow, Report
from annotator.stats.bootstrap import MIN_VALID_SHARE, SCOPE, scoped
from annotator.stats.confidence import BINS
from annotator.stats.designs import more_needed
from annotator.stats.slices import ERROR_RATES, MIN_TESTED
from annotator.stats.stat import Stat, number
from annotator.text import counted, shortened

if TYPE_CHECKING:
    from annotator.report.leaderboard import Leaderboard
    from annotator.stats.raters import PairAgreement, RaterAgreement

MAX_LISTED = 20
"""Longer lists (goldens whose verdict changes) show this many rows and a count of the rest."""
QUESTION_CHARS = 90


@dataclass(frozen=True, slots=True)
class Paragraphs:
    """A titled group of sentences."""

    id: str
    title: str
    lines: list[str]


@dataclass(frozen=True, slots=True)
class Grid:
    """A titled table of text cells."""

    id: str
    title: str
    columns: list[str]
    rows: list[list[str]]
    notes: list[str] = field(default_factory=list)


Block = Paragraphs | Grid


def _probe_grid(block_id: str, judges: list[tuple[str, dict[str, ProbeRate]]]) -> Grid:
    """Each judge's false-positive rate on each kind of probe run (a column per kind)."""
    kinds = [k for k in KINDS if any(k in rates for _, rates in judges)]
    return Grid(
        block_id, "Gullibility probes: the share of probes judged useful (every probe is noise)",
        ["judge", *kinds],
        [[name, *(f"{with_interval(rates[k].rate, 3)} of {rates[k].probes}" if k in rates
                  else "-" for k in kinds)] for name, rates in judges],
        [f"{kind}: {KIND_WORDS[kind]}." for kind in kinds]
        + ["Made with 'annotator probe'; kept apart from the chunks, so no other figure "
           "includes a probe. 95% Wilson intervals."])


DESIGN_WORDS = {
    "stratified": "Stratified PPI++: the judge's mean in each stratum (its CP quartile, per "
                  "system) corrected by that stratum's labelled goldens, weighted by the "
                  "stratum's share of the goldens; valid because each stratum's goldens were "
                  "drawn at random, in the allocation stored with the sample.",
    "active": "Inverse-probability-weighted PPI++: each draw picked a golden with a known "
              "probability (higher where the judge was expected to err), and each labelled "
              "draw is weighted by one over it, so the estimate stays unbiased.",
}


def _stopping(best: Stat, labelled: int, target: float) -> list[str]:
    """How far the sample is from its target half-width, in one sentence (none without an
    interval)."""
    if best.interval is None:
        return []
    half = (best.interval[1] - best.interval[0]) / 2
    if half <= target:
        return [f"Target reached: the interval is +-{half:.3f}, within +-{target:g} "
                "(--target-width)."]
    more = more_needed(labelled, half, target)
    return [f"The interval is +-{half:.3f} on {counted(labelled, 'labelled golden')}: about "
            f"{more:,} more for +-{target:g} (--target-width), from the spread seen so far."]


def _stands_out(fp: str | None, fn: str | None) -> str:
    """'more false positives', 'fewer false negatives', both, or ''."""
    said = [f"{'more' if finding == 'higher' else 'fewer'} {what}"
            for finding, what in ((fp, "false positives"), (fn, "false negatives")) if finding]
    return "; ".join(said)


def value(stat: Stat, digits: int = 4, *, short: bool = False) -> str:
    """A statistic's value in a cell, or 'undefined: reason' (see Stat.format)."""
    return stat.format(digits, style="cell", short=short)


def with_interval(stat: Stat, digits: int = 4) -> str:
    """'value [low, high]' in one cell (see Stat.format)."""
    return stat.format(digits, style="cell", interval=True)


def _stat_rows(stats: dict[str, Stat], keys: list[str] | None = None) -> list[list[str]]:
    return [[LABELS.get(k, k), value(stats[k]), stats[k].interval_text()] for k in keys or list(stats)]


def verdict_string(verdicts: tuple[int, ...]) -> str:
    """'1 0 1 1 0'."""
    return " ".join(str(v) for v in verdicts)


def _changed(row: GoldenRow) -> list[str]:
    return [row.golden_id, row.annotator, f"{row.human:.4f}", f"{row.judge:.4f}",
            number(row.difference, sign=True), "pass" if row.passes_human else "fail",
            "pass" if row.passes_judge else "fail"]


def report_title(report: Report) -> str:
    """The report's title, in every format."""
    return f"Judge '{report.judge}' against human labels"


def _system_rows(systems: dict[str, Stat]) -> list[list[str]]:
    """One row per system's corrected mean CP."""
    return [[f"mean CP, {name}", value(stat), stat.interval_text()]
            for name, stat in systems.items()]


def layout(report: Report) -> list[Block]:
    """Every block of the report, the headline first."""
    c, g = report.chunks, report.goldens
    cov = report.coverage
    blocks: list[Block] = [Paragraphs("headline", "Headline", report.headline)]
    compared = [
        ["session", Path(report.session).name],
        ["judge", report.judge],
        ["annotators", who(report)],
        ["goldens / chunks", f"{cov.goldens} / {cov.chunks}"],
        ["chunks judged", f"{cov.chunks_judged} ({counted(cov.goldens_judged, 'golden')} fully "
         "judged)"],
        *[[f"decided by {a.annotator}", f"{counted(a.chunks_decided, 'chunk')}, "
           f"{counted(a.goldens_complete, 'golden')} complete"
           + (f"; {counted(a.chunks_unsure, 'chunk')} unsure, left out (no CP for "
              f"{counted(a.goldens_unsure, 'golden')} until adjudicated)"
              if a.chunks_unsure else "")] for a in cov.annotators],
        *([["labels compared (person-chunk pairs)", f"{cov.compared_chunks:,} "
            f"({counted(cov.distinct_chunks, 'chunk')} from {counted(cov.from_goldens, 'golden')})"],
           ["person-golden pairs compared (complete under both)", f"{cov.compared_goldens:,} "
            f"({counted(cov.distinct_complete, 'golden')})"]] if len(report.annotators) > 1 else
          [["chunks compared", f"{cov.compared_chunks:,} (from "
            f"{counted(cov.from_goldens, 'golden')})"],
           ["goldens compared (complete under both)", f"{cov.compared_goldens:,}"]]),
        ["context precision convention", report.convention],
        ["pass mark", f"{report.pass_mark:g}"],
        ["intervals", f"95% percentile bootstrap over goldens, {report.resamples} resamples, "
         f"seed {report.seed}" if report.resamples else "none (0 resamples): 'annotator report "
         "--bootstrap 2000' gives 95% bootstrap intervals"],
    ]
    blocks.append(Grid("coverage", "What was compared", ["", ""], compared))

    cf = c.confusion
    rows = [["confusion (human = truth)", f"tp {cf.tp}  fp {cf.fp}  fn {cf.fn}  tn {cf.tn}", ""]]
    rows += _stat_rows(c.stats)
    if c.wilson is not None:
        rows.append(["percent agreement, Wilson 95% (chunks as independent)",
                     f"{c.wilson[0]:.4f} to {c.wilson[1]:.4f}", ""])
    m = c.mcnemar
    rows += [
        ["judge looser (fp) / stricter (fn)", f"{m.looser} / {m.stricter}", ""],
        ["McNemar, cluster-adjusted chi-square", value(m.cluster_statistic), ""],
        ["McNemar, cluster-adjusted p", value(m.cluster_p), ""],
        ["McNemar, exact p (chunks as independent)", value(m.exact_p), ""],
    ]
    notes = [c.direction] + ([c.note] if c.note else [])
    blocks.append(Grid("chunks", "Chunks: the judge against human labels",
                       ["statistic", "value", "95% CI"], rows, notes))
    blocks.append(Grid(
        "by_rank", "Agreement by rank", ["rank", "chunks", "tp", "fp", "fn", "tn", "percent",
                                         "Cohen's kappa", "Gwet's AC1"],
        [[str(r.rank), str(r.confusion.n), str(r.confusion.tp), str(r.confusion.fp),
          str(r.confusion.fn), str(r.confusion.tn), value(r.stats["percent"], 3, short=True),
          value(r.stats["cohen_kappa"], 3, short=True), value(r.stats["gwet_ac1"], 3, short=True)]
         for r in c.by_rank]))

    golden_rows = [["goldens", str(g.goldens), ""], *_stat_rows(g.stats)]
    golden_rows += [
        ["no relevant chunk under both", str(g.no_relevant["both"]), ""],
        ["no relevant chunk, human labels only", str(g.no_relevant["human_only"]), ""],
        ["no relevant chunk, judge labels only", str(g.no_relevant["judge_only"]), ""],
    ]
    blocks.append(Grid("goldens", "Context precision per golden (complete goldens)",
                       ["statistic", "value", "95% CI"], golden_rows,
                       ["Spearman, Kendall and the Bland-Altman limits have no bootstrap "
                        "interval."]))
    changes = g.verdict_changes
    if changes:
        blocks.append(Grid(
            "changes", f"Goldens whose pass/fail changes at {report.pass_mark:g}",
            ["golden", "annotator", "CP human", "CP judge", "difference", "human", "judge"],
            [_changed(r) for r in changes[:MAX_LISTED]],
            [f"and {len(changes) - MAX_LISTED} more"] if len(changes) > MAX_LISTED else []))
    if g.worst:
        blocks.append(Grid(
            "worst", "Worst goldens by |difference|",
            ["golden", "question", "CP human", "CP judge", "difference", "human verdicts",
             "judge verdicts"],
            [[w.row.golden_id, shortened(w.question, QUESTION_CHARS), f"{w.row.human:.4f}",
              f"{w.row.judge:.4f}",
              number(w.row.difference, sign=True), verdict_string(w.row.human_verdicts),
              verdict_string(w.row.judge_verdicts)] for w in g.worst]))

    if (s := report.systems) is not None:
        blocks.append(Grid(
            "systems", f"Systems by metadata '{s.key}'",
            ["system", "goldens", "mean CP human", "mean CP judge", "rank human", "rank judge"],
            [[r.system, str(r.goldens), with_interval(r.mean_human), with_interval(r.mean_judge),
              str(r.rank_human), str(r.rank_judge)] for r in s.systems],
            [f"Kendall tau-b between the two rankings: {value(s.kendall, 3)}; tau_AP of the "
             f"judge's ranking against people's (swaps near the top weigh more): "
             f"{value(s.tau_ap, 3)}.",
             f"Best {s.key}: {s.best_human} under people's labels, {s.best_judge} under the "
             "judge's."]))
        blocks.append(Grid(
            "system_pairs", "System pairs (difference = first - second)",
            ["pair", "difference, human", "difference, judge", "same order", "significant (h/j)"],
            [[f"{p.first} - {p.second}", with_interval(p.difference_human),
              with_interval(p.difference_judge), "no: swapped" if p.swapped else "yes",
              f"{_yes(p.significant_human)} / {_yes(p.significant_judge)}"] for p in s.pairs]))

    if (t := report.top_k) is not None:
        blocks.append(Grid(
            "top_k", "Top-k: each golden cut to its first k chunks",
            ["goldens of", "k", "CP@k human", "CP@k judge", "P@k human", "P@k judge",
             "relevant lost, human", "relevant lost, judge"],
            [[r.system or "every system", str(r.k), with_interval(r.cp_human),
              with_interval(r.cp_judge), with_interval(r.precision_human),
              with_interval(r.precision_judge), with_interval(r.lost_human),
              with_interval(r.lost_judge)] for r in t.rows],
            [f"Smallest k keeping {t.keep:.0%} of the relevant chunks, under people's labels / "
             "the judge's: " + "; ".join(
                 f"{system or 'every system'} {_k(h)} / {_k(j)}"
                 for system, (h, j) in t.smallest.items()) + "."]))

    if report.reranking and report.reranking[0].goldens:
        blocks.append(Grid(
            "reranking", "Reranking these chunks, scored under people's labels",
            ["goldens of", "goldens", "mean CP as retrieved", "ceiling (people's order)",
             "judge's order", "share of the gain the judge captures"],
            [[r.system or "every system", str(r.goldens), with_interval(r.retrieved),
              with_interval(r.ceiling), with_interval(r.judge), with_interval(r.captured)]
             for r in report.reranking],
            ["The ceiling puts people's useful chunks first: the most any reranker can reach on "
             "these chunks. The judge's order sorts by its verdict, then its P(relevant) where it "
             "gives one, then the retriever's rank."]))

    if (errors := report.errors) is not None:
        blocks.append(Grid(
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
             f"{MIN_TESTED} chunks of a class in a slice and in the rest."]))

    if report.probes:
        blocks.append(_probe_grid("probes", [(report.judge, {r.kind: r for r in report.probes})]))
    if report.reasons.wrong:
        reasons = report.reasons
        blocks.append(Paragraphs("reasons", "Right verdict, wrong reason", [
            f"People accepted {counted(reasons.accepted, 'verdict')} of this judge with its "
            f"reason on screen and marked the reason wrong on {reasons.wrong}: "
            f"{with_interval(reasons.rate, 3)} (Wilson 95%, chunks as independent). Those "
            "chunks are left out of the RAGAS annotation export and of --examples, so their "
            "reasoning is not taught."]))

    people = report.people
    blocks.append(Grid(
        "people", "People",
        ["annotator", "decided", "with judge shown", "acceptance rate", "median decision ms",
         "agreement", "Cohen's kappa", "longest fast-accept run",
         "attention checks right (Wilson 95%)"],
        [[a.annotator, str(a.chunks_decided), str(a.shown_judge),
          value(a.stats["acceptance_rate"], 3, short=True),
          value(a.stats["median_decision_ms"], 0, short=True),
          value(a.stats["percent"], 3, short=True), value(a.stats["cohen_kappa"], 3, short=True),
          str(a.longest_fast_accept_run),
          f"{with_interval(a.stats['check_accuracy'], 3)} of {a.checks}" if a.checks else "-"]
         for a in people.annotators],
        [a.warning for a in people.annotators if a.warning is not None]))
    if (b := people.blind) is not None:
        blocks.append(Grid(
            "blind", "Anchoring: blind answers versus pre-filled labels",
            ["", "chunks", "agreement with the judge", "Cohen's kappa"],
            [["blind answers", str(b.blind_chunks), value(b.blind["percent"], 3),
              value(b.blind["cohen_kappa"], 3)],
             ["pre-filled", str(b.prefilled_chunks), value(b.prefilled["percent"], 3),
              value(b.prefilled["cohen_kappa"], 3)]],
            [f"After the reveal, {b.switched_to_judge} of {b.disagreed_blind} blind answers that "
             f"disagreed with the judge were changed to its verdict (switch rate "
             f"{value(b.switch_rate, 3)})."]))

    if (team := report.raters) is not None:
        blocks.extend(_rater_blocks(team))
    if (ppi := report.ppi) is not None:
        blocks.append(Grid(
            "ppi", "Mean context precision, corrected by a random sample of people's labels",
            ["estimate", "value", "95% CI"], _stat_rows(ppi.stats) + _system_rows(ppi.systems),
            [f"{ppi.labelled} of the {ppi.sampled} goldens drawn at random are labelled and "
             f"judged (n); {ppi.unlabelled} other goldens carry the judge's CP only (N).",
             *([f"PPI++ leans on the judge with lambda = {value(ppi.lam, 3)} (0: people only, "
                f"1: plain PPI); its interval is as narrow as people alone would give with "
                f"about {value(ppi.effective_labelled, 0)} labelled goldens."]
               if ppi.lam.value is not None and ppi.effective_labelled.value is not None
               else []),
             "Valid only because the goldens were drawn at random ('annotator annotate "
             "--sample'); the judge's own mean is biased and has no valid interval.",
             *_stopping(ppi.stats["ppi_plus_plus"], ppi.labelled, report.target_width)]))
    if (design := report.design) is not None:
        blocks.append(Grid(
            "design", f"Mean context precision under the {design.design} sample",
            ["estimate", "value", "95% CI"],
            _stat_rows(design.stats) + _system_rows(design.systems),
            [f"{design.labelled} of the {design.sampled} goldens drawn are labelled"
             + (" (active: the draws up to the first golden not yet labelled)"
                if design.design == "active" else "") + ".",
             DESIGN_WORDS[design.design],
             "False-positive and false-negative rates are per chunk over every golden, each "
             "labelled golden weighted by one over its chance of being drawn (linearised "
             "intervals).",
             *_stopping(design.stats["ppi_plus_plus"], design.labelled,
                        report.target_width)]))
    if (conf := report.confidence) is not None:
        blocks.append(Grid("confidence", f"Judge confidence: P(relevant) on {conf.chunks} chunks",
                           ["statistic", "value", "95% CI"], _stat_rows(conf.stats),
                           [f"ECE {name}: {text}." for name, text in conf.ece_conventions.items()]))
        blocks.append(Grid(
            "reliability", f"Reliability ({BINS} equal-width bins on P(relevant))",
            ["bin", "chunks", "mean P(relevant)", "human relevant rate"],
            [[f"{b.low:.1f}-{b.high:.1f}", str(b.chunks),
              "-" if b.mean_p is None else f"{b.mean_p:.3f}",
              "-" if b.human_rate is None else f"{b.human_rate:.3f}"] for b in conf.bins]))
    if report.confidence_gaps:
        blocks.append(Paragraphs("confidence_gaps", "Verdicts without P(relevant)", [
            f"{sum(report.confidence_gaps.values())} of the judge's verdicts carry no P(relevant) "
            "although logprobs were asked for; none is stored rather than a wrong one: "
            + "; ".join(f"{count} because {why}" for why, count in report.confidence_gaps.items())
            + "."]))
    if report.dropped_replicates:
        blocks.append(Paragraphs("dropped", "Bootstrap replicates left out", _dropped(report)))
    return [_without_empty_last_column(b) for b in blocks]


def _rater_blocks(team: RaterAgreement) -> list[Block]:
    """Agreement among people, and the pairwise Cohen's kappa matrix with the judge beside it."""
    kappa = {(p.first, p.second): p for p in team.pairs}
    kappa.update({(p.second, p.first): p for p in team.pairs})
    judge = {p.second: p for p in team.judge_vs}

    def cell(pair: PairAgreement | None) -> str:
        if pair is None:
            return "-"
        return f"{value(pair.kappa, 3, short=True)} (n={pair.chunks})"

    return [
        Grid("raters", f"Between people: {len(team.people)} annotators",
             ["statistic", "value", "95% CI"], _stat_rows(team.stats),
             [f"Alpha counts the {team.shared_chunks} chunks labelled by two or more people "
              "(missing labels allowed); Fleiss' kappa the "
              f"{team.complete_chunks} chunks labelled by every person.", team.ceiling]),
        Grid("rater_matrix", "Cohen's kappa for each pair (chunks both labelled)",
             ["", *team.people, *([f"judge {team.judge}"] if team.judge else [])],
             [[a, *("-" if a == b else cell(kappa.get((a, b))) for b in team.people),
               *([cell(judge.get(a))] if team.judge else [])] for a in team.people]),
    ]


def _without_empty_last_column(block: Block) -> Block:
    """Drop an interval column with nothing in it (no bootstrap), so no empty column shows."""
    if isinstance(block, Paragraphs) or not block.rows or any(row[-1] for row in block.rows):
        return block
    return Grid(block.id, block.title, block.columns[:-1], [row[:-1] for row in block.rows],
                block.notes)


def _dropped(report: Report) -> list[str]:
    """At most four lines: statistics left out of some replicates, statistics left without an
    interval because too many replicates left them undefined, system statistics and error
    rates by slice."""
    kept: list[str] = []
    lost: list[str] = []
    systems = slices = 0
    for key, n in sorted(report.dropped_replicates.items()):
        if key.rpartition(SCOPE)[2] in ERROR_RATES:  # a slice's rate, or the rest's
            slices = max(slices, n)
            continue
        if scoped(key):  # a system's mean or a pair's difference
            systems = max(systems, n)
            continue
        within = n <= (1 - MIN_VALID_SHARE) * report.resamples
        (kept if within else lost).append(f"{LABELS.get(key, key)} ({n:,})")
    lines = []
    of = f"of {report.resamples:,} replicates"
    if kept:
        lines.append(f"Undefined in some {of} (for example a single class or constant CP), which "
                     "are left out of their intervals: " + ", ".join(kept) + ".")
    if lost:
        lines.append(f"Undefined in too many {of} for an interval, so none is given: "
                     + ", ".join(lost) + ".")
    if systems:
        lines.append(f"System means and differences: up to {systems:,} {of} drew no golden of a "
                     "system and were left out.")
    if slices:
        lines.append(f"Error rates by slice: up to {slices:,} {of} drew no chunk of a slice's "
                     "class and were left out.")
    return lines


def _k(k: int | None) -> str:
    return "-" if k is None else str(k)


def _yes(flag: bool | None) -> str:
    return "-" if flag is None else ("yes" if flag else "no")


def leaderboard_layout(board: Leaderboard) -> list[Block]:
    """The judge leaderboard as blocks: headline, judges, pairs."""
    blocks: list[Block] = [Paragraphs("headline", "Headline", board.headline)]
    def cell(stat: Stat, digits: int = 3) -> str:
        return with_interval(stat, digits) if stat.value is not None else value(stat, short=True)

    agreement, per_golden = columns.keys("chunks"), columns.keys("cp")
    split = "" if board.split == "all" else f" ({board.split} split)"
    own = ["chunks"] if board.pairwise else []
    scored = (f"Each judge is scored on the chunks that carry {board.truth.label} and its own "
              "verdict (no chunk carries every judge's)" if board.pairwise else
              f"Scored on the {counted(board.chunks, 'chunk')} that carry {board.truth.label} "
              "and a verdict from every judge")
    blocks.append(Grid(
        "judges", f"Judges against {board.truth.label}{split}, chunk by chunk (sorted by "
                  f"{LABELS.get(board.sort, board.sort)})",
        ["judge", *own, *(LABELS[k] for k in agreement)],
        [[row.judge, *([f"{row.chunks:,}"] if own else []),
          *(cell(row.stats[k]) for k in agreement)] for row in board.judges],
        [f"{scored}; 95% intervals from one bootstrap over goldens shared by all judges "
         f"({board.resamples} resamples, seed {board.seed})."]))
    blocks.append(Grid(
        "judges_cp", "Context precision",
        ["judge", *(["goldens"] if own else []), *(LABELS[k] for k in per_golden)],
        [[row.judge, *([f"{row.goldens:,}"] if own else []),
          *(cell(row.stats[k]) for k in per_golden)] for row in board.judges],
        ["Over each judge's goldens complete under its verdicts and the truth." if own else
         f"Over the {counted(board.goldens, 'golden')} complete under every label set."]))
    blocks.append(Grid(
        "judges_calls", "Prompt, cost, failures and stability",
        ["judge", "prompt", "examples", "calls", "parse failures", "flip rate between runs",
         "tokens per 1,000 chunks", "cached share", "USD per 1,000 chunks", "kappa per USD",
         "median latency ms"],
        [[row.judge, row.calls.style, str(row.calls.examples), str(row.calls.calls),
          cell(f["parse_failure_rate"]), cell(f["flip_rate"]),
          cell(f["tokens_per_1000_chunks"], 0), cell(f["cached_share"]),
          cell(f["cost_per_1000_chunks"], 4), cell(f["kappa_per_dollar"], 1),
          cell(f["median_latency_ms"], 0)]
         for row in board.judges for f in [row.calls.figures]],
        ["Over every call each judge made in this session. USD per 1,000 chunks counts the "
         "prompt tokens a provider's cache served at the cached price (--price JUDGE=IN,OUT,"
         "CACHED); kappa per USD is Cohen's kappa over USD per 1,000 chunks."]))
    if len(board.judges) > 1:
        names = [row.judge for row in board.judges]
        kappa = {(a.first, a.second): a for a in board.agreement}
        kappa.update({(a.second, a.first): a for a in board.agreement})
        # Columns by number, rows by number and name: a name is never cut to a column's width.
        blocks.append(Grid(
            "judge_agreement", "Judges against each other: Cohen's kappa",
            ["judge", *map(str, range(1, len(names) + 1))],
            [[f"{i}. {a}", *("-" if a == b else value(kappa[a, b].kappa, 3, short=True)
                             for b in names)] for i, a in enumerate(names, 1)],
            ["On the chunks both judges judged, people's labels aside: two judges with a "
             "high kappa between them tend to fail on the same chunks. Columns are the judges "
             "numbered as the rows."]))
    if any(row.probes for row in board.judges):
        blocks.append(_probe_grid("judges_probes", [(row.judge, row.probes)
                                                    for row in board.judges]))
    unstable = [(row.judge, *chunk) for row in board.judges for chunk in row.calls.unstable]
    if unstable:
        blocks.append(Grid(
            "unstable", "Unstable chunks: the verdict changed between runs",
            ["judge", "golden", "rank", "verdict in each run"],
            [[judge, golden, str(rank), " ".join(map(str, said))]
             for judge, golden, rank, said in unstable]))
    if board.pairs:
        blocks.append(Grid(
            "pairs", "Pairs: who is right where the other is wrong",
            ["pair", *own, "first only right", "second only right", "kappa difference",
             "McNemar p (cluster)", "Holm p", "verdict"],
            [[f"{p.first}\nvs {p.second}", *([f"{p.chunks:,}"] if own else []),
              str(p.first_only_right), str(p.second_only_right),
              with_interval(p.kappa_difference, 3), value(p.p, 4, short=True),
              value(p.p_holm, 4, short=True),
              f"{p.better} is better" if p.better else "no significant difference"]
             for p in board.pairs]))
    return [_without_empty_last_column(b) for b in blocks]
