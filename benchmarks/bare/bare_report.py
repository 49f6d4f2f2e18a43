"""The floor for a report: one SQL read, numpy per-golden sums, the same 2,000 resamples.

The simplest program doing the work 'annotator report' does on a session: read every chunk's
golden, rank, person's label, judge's verdict and P(relevant) in one query; CP per golden and
the confusion, CP and calibration sums per golden in numpy; the cluster bootstrap with the
same draws. It prints nothing but its CPU seconds (benchmarks/scale.py measures it).
Run: python benchmarks/bare/bare_report.py SESSION.db JUDGE ANNOTATOR [RESAMPLES]
"""

from __future__ import annotations

import sqlite3
import sys

import numpy as np

BLOCK = 200


def main() -> None:
    """Read, sum, resample."""
    path, judge, annotator = sys.argv[1:4]
    resamples = int(sys.argv[4]) if len(sys.argv) > 4 else 2000
    conn = sqlite3.connect(path)
    rows = np.fromiter(conn.execute(
        """SELECT g.position, c.rank, coalesce(l.verdict, -1), coalesce(v.verdict, -1),
                  coalesce(v.p, 'nan')
           FROM goldens g JOIN chunks c ON c.golden_id = g.id
           LEFT JOIN labels l ON l.chunk_id = c.id AND l.annotator = ?
           LEFT JOIN (SELECT chunk_id, verdict, p_relevant AS p, max(id) FROM verdicts
                      WHERE judge = ? AND error IS NULL AND repetition = 1 GROUP BY chunk_id) v
             ON v.chunk_id = c.id
           ORDER BY g.position, c.rank""", [annotator, judge]),
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


if __name__ == "__main__":
    main()
