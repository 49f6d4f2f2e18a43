"""Would the judge rank the retrieval systems as people do? Kendall's tau-b and tau_AP_b between
the systems' mean CP under people's labels and under the judge's, each with its golden-bootstrap
interval (every replicate ranks the systems again).

Used by the report (per judge) and the leaderboard (a column per judge).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from annotator.stats.bootstrap import Estimates, Sums, column
from annotator.stats.ranks import ranking_tau_ap, ranking_tau_b
from annotator.stats.stat import Stat

Scores = Callable[[Sums], np.ndarray]
"""The systems' scores from the sums: shape (systems,), or (replicates, systems)."""

FEW_SYSTEMS = "two systems: their pair says all a ranking can"


def ranking_agreement(est: Estimates, key: str, human: Scores, judge: Scores, systems: int
                      ) -> tuple[Stat, Stat]:
    """(tau-b, tau_AP_b) of the judge's ranking of ``systems`` systems against people's."""
    if systems < 3:
        reason = FEW_SYSTEMS if systems == 2 else "fewer than two systems"
        return Stat.undefined(reason), Stat.undefined(reason)
    flat = human(est.totals)
    if np.all(flat == flat[0]):
        reason = "people's labels give every system the same mean CP"
        return Stat.undefined(reason), Stat.undefined(reason)
    return (est.stat(column("systems_tau_b", key), lambda s: ranking_tau_b(human(s), judge(s))),
            est.stat(column("systems_tau_ap", key),
                     lambda s: ranking_tau_ap(human(s), judge(s))))
