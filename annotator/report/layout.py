"""The report laid out as titled paragraphs and tables (report/blocks.py): each section's blocks
in reading order, and the judge leaderboard's. The Rich table, Markdown and HTML renderers only
turn these blocks into their own markup, so all three always say the same thing in the same
order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from annotator.report import columns
from annotator.report.blocks import Block, Grid, Paragraphs
from annotator.report.cells import probe_grid, value, with_interval
from annotator.report.model import LABELS, Report
from annotator.report.sections import SECTIONS
from annotator.stats.stat import Stat
from annotator.text import counted

if TYPE_CHECKING:
    from annotator.report.leaderboard import Leaderboard
    from annotator.stats.alt_test import AltTest

__all__ = ["Block", "Grid", "Paragraphs", "layout", "leaderboard_layout", "report_title"]


def layout(report: Report) -> list[Block]:
    """Every block of the report, the headline first, then each section's."""
    blocks: list[Block] = [Paragraphs("headline", "Headline", report.headline)]
    for section in SECTIONS:
        blocks.extend(section.blocks(report))
    return [_without_empty_last_column(b) for b in blocks]


def report_title(report: Report) -> str:
    """The report's title, in every format."""
    return f"Judge '{report.judge}' against human labels"


def _without_empty_last_column(block: Block) -> Block:
    """Drop an interval column with nothing in it (no bootstrap), so no empty column shows."""
    if isinstance(block, Paragraphs) or not block.rows or any(row[-1] for row in block.rows):
        return block
    return Grid(block.id, block.title, block.columns[:-1], [row[:-1] for row in block.rows],
                block.notes)


def leaderboard_layout(board: Leaderboard) -> list[Block]:
    """The judge leaderboard as blocks: headline, judges, pairs."""
    blocks: list[Block] = [Paragraphs("headline", "Headline", board.headline),
                           *map(_without_undefined_columns, _judge_tables(board))]
    if any(row.alt_test is not None and row.alt_test.why is None for row in board.judges):
        blocks.append(_alt_test_table(board))
    if len(board.judges) > 1:
        blocks.append(_judge_matrix(board))
    if any(row.probes for row in board.judges):
        blocks.append(probe_grid("judges_probes", [(row.judge, row.probes)
                                                   for row in board.judges]))
    unstable = [(row.judge, *chunk) for row in board.judges for chunk in row.calls.unstable]
    if unstable:
        blocks.append(Grid(
            "unstable", "Unstable chunks: the verdict changed between runs",
            ["judge", "golden", "rank", "verdict in each run"],
            [[judge, golden, str(rank), " ".join(map(str, said))]
             for judge, golden, rank, said in unstable]))
    if board.pairs:
        blocks.append(_pairs(board))
    return [_without_empty_last_column(b) for b in blocks]


def _without_undefined_columns(block: Block) -> Block:
    """A judges' table without the columns undefined for every judge, and one line saying
    which and why (a column of 'undefined' says nothing forty times)."""
    if isinstance(block, Paragraphs) or not block.rows:
        return block
    empty = [i for i in range(1, len(block.columns))
             if all(row[i].startswith("undefined") for row in block.rows)]
    if not empty:
        return block
    reasons = {}
    for i in empty:
        why = block.rows[0][i].partition(":")[2].strip()
        same = all(row[i] == block.rows[0][i] for row in block.rows)
        reasons[block.columns[i]] = f" ({why})" if why and same else ""
    keep = [i for i in range(len(block.columns)) if i not in empty]
    note = ("Left out, undefined for every judge: "
            + "; ".join(f"{name}{why}" for name, why in reasons.items()) + ".")
    return Grid(block.id, block.title, [block.columns[i] for i in keep],
                [[row[i] for i in keep] for row in block.rows], [*block.notes, note])


def _alt_test_table(board: Leaderboard) -> Block:
    """Each judge's alternative annotator test, on chunk verdicts and on each golden's CP."""
    def cells(test: AltTest | None, agreement: bool) -> list[str]:
        if test is None or test.why is not None:
            why = "unranked pool" if test is None else test.why
            return [f"undefined: {str(why).split(':')[0]}", "", "", *([""] if agreement else [])]
        out = ["yes" if test.passed else "no",
               f"{test.winning_rate:.2f} ({sum(p.rejected for p in test.people)} of "
               f"{len(test.people)})", f"{test.advantage_probability:.2f}"]
        if agreement:
            out.append(f"{test.judge_score:.0%} / {test.ceiling:.0%}")
        return out

    first = next(row.alt_test for row in board.judges
                 if row.alt_test is not None and row.alt_test.why is None)
    on_cp = [row.alt_test_cp for row in board.judges]
    ran_on_cp = any(test is not None and test.why is None for test in on_cp)
    cp = ["replaces (CP)", "winning rate (CP)", "advantage (CP)"] if ran_on_cp else []
    why_not_cp = next((test.why for test in on_cp if test is not None), None)
    return Grid(
        "alt_test", "Can the judge replace a person? (alternative annotator test)",
        ["judge", "replaces (chunks)", "winning rate", "advantage", "agrees: judge / person",
         *cp],
        [[row.judge, *cells(row.alt_test, True),
          *(cells(row.alt_test_cp, False) if ran_on_cp else [])]
         for row in board.judges],
        [*([] if ran_on_cp or why_not_cp is None else
           [f"On each golden's CP the test cannot run: {why_not_cp}."]),
         f"Each person held out in turn ({', '.join(board.people)}): the judge wins against "
         "that person when a one-sided t-test rejects that the person matches the remaining "
         f"people better by epsilon {first.epsilon:g} or more (Benjamini-Yekutieli, FDR "
         f"{first.alpha:g}); it replaces a person when it wins against half of them or more "
         "(Calderon, Reichart & Dror, ACL 2025). Advantage: the share of items where the judge "
         "matches the others at least as well as the held-out person, averaged over people; "
         "use it to compare judges.",
         "Agrees: how often the judge, and a held-out person, agree with the remaining "
         "people (the person's figure is the human-human ceiling). Chunks of one golden are "
         "not independent; the CP columns test each golden's CP (minus the RMSE against the "
         "others), where goldens are."])


def _cell(stat: Stat, digits: int = 3) -> str:
    """A leaderboard cell: the value with its interval, or why it is undefined."""
    return with_interval(stat, digits) if stat.value is not None else value(stat, short=True)


def _cp_table(board: Leaderboard, own: list[str], per_golden: list[str]) -> Block:
    """The judges' CP against the truth's (a sentence on an unranked pool, which has none)."""
    if board.unranked:
        return Paragraphs("judges_cp", "Context precision", [
            "An unranked pool: its chunks have no order, so no judge's CP is compared."])
    return Grid("judges_cp", "Context precision",
                ["judge", *(["goldens"] if own else []), *(LABELS[k] for k in per_golden)],
                [[row.judge, *([f"{row.goldens:,}"] if own else []),
                  *(_cell(row.stats[k]) for k in per_golden)] for row in board.judges],
                ["Over each judge's goldens complete under its verdicts and the truth." if own
                 else f"Over the {counted(board.goldens, 'golden')} complete under every label "
                 "set."])

def _judge_tables(board: Leaderboard) -> list[Block]:
    """The judges' agreement, their CP, and their calls."""
    agreement, per_golden = columns.keys("chunks"), columns.keys("cp")
    split = "" if board.split == "all" else f" ({board.split} split)"
    own = ["chunks"] if board.pairwise else []
    scored = (f"Each judge is scored on the chunks that carry {board.truth.label} and its own "
              "verdict (no chunk carries every judge's)" if board.pairwise else
              f"Scored on the {counted(board.chunks, 'chunk')} that carry {board.truth.label} "
              "and a verdict from every judge")
    tables = [
        Grid("judges", f"Judges against {board.truth.label}{split}, chunk by chunk (sorted by "
                       f"{LABELS.get(board.sort, board.sort)})",
             ["judge", *own, *(LABELS[k] for k in agreement)],
             [[row.judge, *([f"{row.chunks:,}"] if own else []),
               *(_cell(row.stats[k]) for k in agreement)] for row in board.judges],
             [f"{scored}; 95% intervals from one bootstrap over goldens shared by all judges "
              f"({board.resamples} resamples, seed {board.seed})."]),
        _cp_table(board, own, per_golden),
        Grid("judges_calls", "Prompt, cost, failures and stability",
             ["judge", "prompt", "examples", "calls", "parse failures", "flip rate between runs",
              "tokens per 1,000 chunks", "cached share", "USD per 1,000 chunks", "kappa per USD",
              "median latency ms"],
             [[row.judge, row.calls.style, str(row.calls.examples), str(row.calls.calls),
               _cell(f["parse_failure_rate"]), _cell(f["flip_rate"]),
               _cell(f["tokens_per_1000_chunks"], 0), _cell(f["cached_share"]),
               _cell(f["cost_per_1000_chunks"], 4), _cell(f["kappa_per_dollar"], 1),
               _cell(f["median_latency_ms"], 0)]
              for row in board.judges for f in [row.calls.figures]],
             ["Over every call each judge made in this session. USD per 1,000 chunks counts the "
              "prompt tokens a provider's cache served at the cached price (--price JUDGE=IN,"
              "OUT,CACHED); kappa per USD is Cohen's kappa over USD per 1,000 chunks."]),
    ]
    if board.scale is not None:
        graded = columns.keys("grades")
        tables.insert(1, Grid(
            "judges_grades", f"Agreement on grades 0-{board.scale.top} (binary statistics read "
                             f"relevant from {board.scale.relevant_from})",
            ["judge", *(LABELS[k] for k in graded)],
            [[row.judge, *(_cell(row.stats[k]) for k in graded)] for row in board.judges],
            ["The same chunks as above, each judge's grades against the truth's; AC2 with "
             "Gwet's quadratic weights. JSON and CSV add each judge's kappa at every pair of "
             "thresholds (kappa_from_PEOPLE_JUDGE), with its interval."]))
    return tables


def _judge_matrix(board: Leaderboard) -> Block:
    """Each pair of judges' kappa, columns numbered as the rows; past MATRIX_UP_TO judges
    (unless --all-pairs) the most and least alike pairs only, a list that stays readable."""
    names = [row.judge for row in board.judges]
    if len(names) > columns.MATRIX_UP_TO and not board.all_pairs:
        return _alike_pairs(board)
    kappa = {(a.first, a.second): a for a in board.agreement}
    kappa.update({(a.second, a.first): a for a in board.agreement})
    # Columns by number, rows by number and name: a name is never cut to a column's width.
    return Grid(
        "judge_agreement", "Judges against each other: Cohen's kappa",
        ["judge", *map(str, range(1, len(names) + 1))],
        [[f"{i}. {a}", *("-" if a == b else value(kappa[a, b].kappa, 3, short=True)
                         for b in names)] for i, a in enumerate(names, 1)],
        ["On the chunks both judges judged, people's labels aside: two judges with a "
         "high kappa between them tend to fail on the same chunks. Columns are the judges "
         "numbered as the rows."])


def _alike_pairs(board: Leaderboard) -> Block:
    """The SHOWN_PAIRS most and least alike pairs of judges, by their kappa."""
    ranked = sorted((a for a in board.agreement if a.kappa.value is not None),
                    key=lambda a: (-(a.kappa.value or 0.0), a.first, a.second))
    n = columns.SHOWN_PAIRS
    shown = ranked if len(ranked) <= 2 * n else [*ranked[:n], *ranked[-n:]]
    undefined = len(board.agreement) - len(ranked)
    return Grid(
        "judge_agreement", f"Judges against each other: the {n} most and {n} least alike pairs",
        ["pair", "Cohen's kappa", "chunks"],
        [[f"{a.first}\nvs {a.second}", value(a.kappa, 3, short=True), f"{a.chunks:,}"]
         for a in shown],
        [f"Of {counted(len(board.agreement), 'pair')} of judges ({len(board.judges)} judges), "
         "by their kappa on the chunks both judged, people's labels aside: two judges alike "
         "tend to fail on the same chunks. --all-pairs shows the whole matrix; the HTML draws "
         "it as a heatmap."
         + (f" {counted(undefined, 'pair')} with no kappa left out." if undefined else "")])


def _pairs(board: Leaderboard) -> Block:
    """Who is right where the other is wrong, Holm-corrected: the pairs a test separates
    (every pair with --all-pairs)."""
    own = ["chunks"] if board.pairwise else []
    shown = board.pairs if board.all_pairs else [p for p in board.pairs if p.better]
    left = len(board.pairs) - len(shown)
    note = ([f"{counted(left, 'pair')} no test separates {'is' if left == 1 else 'are'} left "
             "out; --all-pairs lists every pair (JSON and CSV hold them all)."] if left else [])
    # Many pairs: one line each (a pair's two names still never break: see render).
    joint = " vs " if len(shown) > columns.SHOWN_PAIRS else "\nvs "
    if not shown:
        return Paragraphs("pairs", "Pairs: who is right where the other is wrong", [
            f"No test separates any of the {counted(len(board.pairs), 'pair')} of judges "
            "(cluster-adjusted McNemar, Holm-corrected): --all-pairs lists them."])
    return Grid(
        "pairs", "Pairs: who is right where the other is wrong",
        ["pair", *own, "first only right", "second only right", "kappa difference",
         "McNemar p (cluster)", "Holm p", "verdict"],
        [[f"{p.first}{joint}{p.second}", *([f"{p.chunks:,}"] if own else []),
          str(p.first_only_right), str(p.second_only_right),
          with_interval(p.kappa_difference, 3), value(p.p, 4, short=True),
          value(p.p_holm, 4, short=True),
          f"{p.better} is better" if p.better else "no significant difference"]
         for p in shown], note)
