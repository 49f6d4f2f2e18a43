"""The leaderboard's judges: each judge's agreement with the truth, its CP and its calls, as
tables and as the JSON's rows; and which system each judge would pick."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from annotator.report import columns
from annotator.report.blocks import Block, Grid, Paragraphs
from annotator.report.cells import board_cell as _cell
from annotator.report.epochs import epochs_json
from annotator.report.jsonparts import alt_test_dict, probes_dict, stats_dict
from annotator.report.model import LABELS
from annotator.report.section import BoardSection
from annotator.text import counted

if TYPE_CHECKING:
    from annotator.report.leaderboard import Leaderboard


def blocks(board: Leaderboard) -> list[Block]:
    """The judges' agreement, their CP and their calls (a column undefined for every judge
    left out, with a line saying why)."""
    return [_without_undefined_columns(table) for table in _tables(board)]


def _tables(board: Leaderboard) -> list[Block]:
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


def json(board: Leaderboard) -> dict[str, Any]:
    """Each judge's row of the JSON document."""
    return {"judges": [
        {"judge": row.judge, "chunks": row.chunks, "goldens": row.goldens,
         "best_system_human": row.best_system[0] if row.best_system else None,
         "best_system_judge": row.best_system[1] if row.best_system else None,
         **stats_dict(row.stats),
         "probes": probes_dict(row.probes.values()),
         "alt_test": alt_test_dict(row.alt_test),
         **({} if board.unranked else {"alt_test_cp": alt_test_dict(row.alt_test_cp)}),
         "prompt": row.calls.style, "examples": row.calls.examples,
         "calls": row.calls.calls, "failed_calls": row.calls.failed,
         **{f"call_{k}": v for k, v in stats_dict(row.calls.figures).items()},
         "unstable_chunks": [{"golden_id": g, "rank": rank, "verdicts": said}
                             for g, rank, said in row.calls.unstable],
         **(epochs_json(row.epochs) if row.epochs is not None else {})}
        for row in board.judges]}


def headline(board: Leaderboard) -> list[str]:
    """Which judges would pick the system people's labels rank first."""
    picks = [(row.judge, row.best_system) for row in board.judges if row.best_system is not None]
    if not picks:
        return []
    ours = ", ".join(sorted({human for _, (human, _) in picks}))
    wrong = [f"'{judge}' picks {theirs}" for judge, (human, theirs) in picks if human != theirs]
    if not wrong:
        who = "Every judge" if len(picks) > 1 else f"'{picks[0][0]}'"
        return [f"{who} would pick the {board.group_by} people's labels rank first ({ours})."]
    return [f"Judges that would pick another best {board.group_by} than people's labels "
            f"({ours}): " + "; ".join(wrong) + "."]


SECTION = BoardSection("judges", blocks, json, headline)
