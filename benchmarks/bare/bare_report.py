"""The floor for a report: one SQL read, numpy per-golden sums, the same 2,000 resamples.

The simplest program doing the work 'annotator report' does on a session: read every chunk's
golden, rank, person's label, judge's verdict and P(relevant) in one query; CP per golden and
the confusion, CP and calibration sums per golden in numpy; the cluster bootstrap with the
same draws. With --slices it also does the work of the report's error slices (where the judge
errs): it reads every chunk's text and question in the same query, takes each chunk's length
and its overlap with the question's content words (each found as a whole word), cuts
rank, length and overlap into slices and sums each slice's error counts per golden into the
bootstrap. The leaderboard has no slices: it is measured against the program without them.
It prints nothing (benchmarks/scale.py measures its CPU). SESSION may be a PostgreSQL URL: the
same query in PostgreSQL's words (DISTINCT ON for the latest verdict), read through psycopg
(benchmarks/postgres.py).
Run: python benchmarks/bare/bare_report.py SESSION.db|URL JUDGE ANNOTATOR [RESAMPLES] [--slices]
"""

from __future__ import annotations

import re
import sqlite3
import sys
from typing import Any

import numpy as np

from annotator.lexical import STOP_WORDS  # a constant: the same stop words

BLOCK = 200
WORD = re.compile(r"\w+")


def main() -> None:
    """Read, sum, resample."""
    slices = "--slices" in sys.argv
    args = [a for a in sys.argv[1:] if a != "--slices"]
    path, judge, annotator = args[:3]
    resamples = int(args[3]) if len(args) > 3 else 2000
    texts: list[tuple[str, str]] = []

    def kept(row: tuple[object, ...]) -> tuple[object, ...]:
        texts.append((row[5], row[6]))  # type: ignore[arg-type]
        return row[:5]

    postgres = path.startswith("postgresql://")
    latest = ("SELECT DISTINCT ON (chunk_id) chunk_id, verdict, p_relevant AS p FROM verdicts "
              "WHERE judge = %s AND error IS NULL AND repetition = 1 ORDER BY chunk_id, id DESC"
              if postgres else
              "SELECT chunk_id, verdict, p_relevant AS p, max(id) FROM verdicts "
              "WHERE judge = ? AND error IS NULL AND repetition = 1 GROUP BY chunk_id")
    query = f"""SELECT g.position, c.rank, coalesce(l.verdict, -1), coalesce(v.verdict, -1),
                  coalesce(v.p, 'nan'){", c.text, g.user_input" if slices else ""}
           FROM goldens g JOIN chunks c ON c.golden_id = g.id
           LEFT JOIN labels l ON l.chunk_id = c.id AND l.annotator = {"%s" if postgres else "?"}
           LEFT JOIN ({latest}) v ON v.chunk_id = c.id
           ORDER BY g.position, c.rank"""
    if postgres:
        import psycopg

        read: Any = psycopg.connect(path).execute(query, [annotator, judge])
    else:
        read = sqlite3.connect(path).execute(query, [annotator, judge])
    rows = np.fromiter((kept(row) if slices else row for row in read),
        dtype=[("g", np.int64), ("rank", np.int64), ("h", np.int8), ("j", np.int8),
               ("p", float)])
    golden = np.unique(rows["g"], return_inverse=True)[1].ravel()
    goldens = int(golden.max()) + 1
    h, j, p = rows["h"].astype(float), rows["j"].astype(float), rows["p"]

    def per_golden(values: np.ndarray, where: np.ndarray | None = None) -> np.ndarray:
        at = golden if where is None else golden[where]
        return np.bincount(at, weights=values if where is None else values[where],
                           minlength=goldens)

    first = np.flatnonzero(np.diff(golden, prepend=-1))
    lengths = np.diff(np.append(first, len(golden)))

    def cp(v: np.ndarray) -> np.ndarray:
        """CP per golden: precision@k summed over the relevant ranks, over the number relevant."""
        relevant = np.where(v > 0, 1.0, 0.0)
        cum = np.cumsum(relevant)
        hits = cum - np.repeat(np.concatenate([[0.0], cum[first[1:] - 1]]), lengths)
        return per_golden(hits / rows["rank"] * relevant) / (per_golden(relevant) + 1e-10)

    complete = per_golden(((h < 0) | (j < 0)).astype(float)) == 0
    cp_h, cp_j = cp(h), cp(j)
    d = cp_j - cp_h
    both = (h >= 0) & (j >= 0)
    columns = [per_golden(((h == a) & (j == b)).astype(float), both)
               for a, b in ((1, 1), (0, 1), (1, 0), (0, 0))]
    columns += [complete * x for x in (np.ones(goldens), cp_h, cp_j, cp_h * cp_h, cp_j * cp_j,
                                       cp_h * cp_j, np.abs(d), d * d, np.abs(d) > 0.2,
                                       cp_h >= 0.7, cp_j >= 0.7)]
    has_p = both & ~np.isnan(p)
    for k in range(10):  # the calibration bins' counts, P sums and hits
        in_bin = has_p & (np.minimum((np.nan_to_num(p) * 10).astype(int), 9) == k)
        columns += [per_golden(in_bin.astype(float)), per_golden(np.nan_to_num(p) * in_bin),
                    per_golden(h * in_bin)]
    columns += [per_golden((np.nan_to_num(p) - h) ** 2 * has_p)]
    if slices:
        columns += slice_columns(texts, rows["rank"], h, j, both, per_golden)
    matrix = np.column_stack(columns)
    rng = np.random.default_rng(0)
    weights = np.empty((min(BLOCK, resamples), goldens))
    out, done = [], 0
    while done < resamples:
        b = min(BLOCK, resamples - done)
        for row in range(b):
            weights[row] = np.bincount(rng.integers(0, goldens, size=goldens), minlength=goldens)
        out.append(weights[:b] @ matrix)
        done += b
    replicates = np.vstack(out)
    np.percentile(replicates, [2.5, 97.5], axis=0)


def has_word(word: str, text: str) -> bool:
    """Whether ``word`` stands in ``text`` as a whole run of word characters: found with
    str.find, which is quicker than splitting every chunk into words (the tool does the same)."""
    at = text.find(word)
    while at != -1:
        end = at + len(word)
        before = text[at - 1] if at else " "
        after = text[end] if end < len(text) else " "
        if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
            return True
        at = text.find(word, at + 1)
    return False


def slice_columns(texts: list[tuple[str, str]], rank: np.ndarray, h: np.ndarray, j: np.ndarray,
                  both: np.ndarray, per_golden: Any) -> list[np.ndarray]:
    """Per slice of rank, length and overlap: false positives, people's noise chunks, false
    negatives and people's useful chunks, summed per golden."""
    words: dict[str, frozenset[str]] = {}
    lengths, overlaps = np.full(len(rank), np.nan), np.full(len(rank), np.nan)
    for i in np.flatnonzero(both).tolist():
        text, question = texts[i]
        if question not in words:
            words[question] = frozenset(w for w in WORD.findall(question.lower())
                                        if len(w) > 1 and w not in STOP_WORDS)
        mine = words[question]
        lengths[i] = len(text)
        if mine:
            lowered = text.lower()
            overlaps[i] = sum(1 for w in mine if w in lowered and has_word(w, lowered)) / len(mine)
    codes = [np.searchsorted([1, 2, 3, 5, 10, 20], rank, side="left")]
    for values in (lengths, overlaps):
        known = ~np.isnan(values)
        edges = (np.unique(np.quantile(values[known], [0.25, 0.5, 0.75])) if known.any()
                 else np.zeros(0))
        codes.append(np.where(known, np.searchsorted(edges, np.nan_to_num(values),
                                                     side="right"), -1))
    out = []
    for code in codes:
        for b in np.unique(code[code >= 0]).tolist():
            inside = both & (code == b)
            out += [per_golden(((h == 0) & (j == 1) & inside).astype(float)),
                    per_golden(((h == 0) & inside).astype(float)),
                    per_golden(((h == 1) & (j == 0) & inside).astype(float)),
                    per_golden(((h == 1) & inside).astype(float))]
    return out


if __name__ == "__main__":
    main()
