"""The key table, from annotator.tui.keys."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from annotator.stats.metrics import context_precision, precision_at_k
from annotator.tui.keys import KEYS, Key

INTRO = (
    "Each chunk shows the judge's verdict and reason. Accept it when it is right, flip it when "
    "it is wrong. A verdict is 'useful' when the chunk helped arrive at the reference answer, "
    "'noise' otherwise. Every decision is written to the session file before the screen shows it."
)

EXAMPLE = (1, 1, 0, 1, 1)
"""The explainer's savings-account golden: urban balance, fee, KYC (noise), semi-urban, rural."""


def metric_help(pass_mark: float) -> Text:
    """What precision@k, context precision and the pass mark mean, with the worked example
    computed by the same functions the screen uses."""
    at_k = precision_at_k(EXAMPLE)
    cp = context_precision(EXAMPLE, ragas_compatible=False)
    text = Text()
    text.append("What the numbers mean\n", style="bold underline")
    text.append("Precision@k (P@k)", style="bold")
    text.append(" is the share of useful chunks among the first k. Each chunk shows it under "
                "the judge's verdicts and under yours.\n")
    text.append("Context precision (CP)", style="bold")
    text.append(" is the mean of P@k over the ranks that hold a useful chunk:\n"
                "    CP = Σ_k P@k · v_k / Σ_k v_k   (v_k = 1 when rank k is useful, else 0)\n"
                "Noise high in the ranking lowers P@k at every useful chunk after it; a golden "
                "with no useful chunk scores 0.\n")
    text.append("Example", style="bold")
    text.append(" (the savings-account golden), verdicts "
                + " ".join(map(str, EXAMPLE)) + ":\n")
    hits = 0
    for k, (verdict, p) in enumerate(zip(EXAMPLE, at_k, strict=True), 1):
        hits += verdict
        text.append(f"    P@{k} = {hits}/{k} = {p:.2f}" + ("" if verdict else
                                                           "   (noise: not counted)") + "\n")
    counted = [p for p, v in zip(at_k, EXAMPLE, strict=True) if v]
    text.append(f"    CP = ({' + '.join(f'{p:.2f}' for p in counted)}) / {len(counted)} = "
                f"{cp:.4f}\n")
    text.append("Pass mark", style="bold")
    text.append(f": a golden passes when its CP reaches {pass_mark:g} (--pass-mark). The summary "
                "shows CP under the judge's verdicts and under yours, and whether each passes: "
                "where they differ, the judge would pass or fail this retrieval unlike you.")
    return text


class HelpScreen(ModalScreen[None]):
    """What each key does."""

    BINDINGS = [Binding("escape,question_mark,q", "dismiss", "Close")]  # noqa: RUF012

    def __init__(self, keys: tuple[Key, ...] = KEYS, intro: str = INTRO,
                 pass_mark: float | None = None) -> None:
        super().__init__()
        self.keys = keys
        self.intro = intro
        self.pass_mark = pass_mark
        """The review's pass mark; with one, the help explains the numbers too."""

    def compose(self) -> ComposeResult:
        table = Table(show_header=True, box=None, padding=(0, 2), title="Keys",
                      title_justify="left")
        table.add_column("key", style="bold")
        table.add_column("what it does")
        for key in self.keys:
            table.add_row(key.shown, key.help)
        table.add_row("ctrl+p", "Command palette: every action by name.")
        with VerticalScroll(id="dialog"):
            yield Static(Text(self.intro), id="help-intro")
            yield Static(table)
            if self.pass_mark is not None:
                yield Static(metric_help(self.pass_mark), id="help-metric")
            yield Static(Text("escape closes this help", style="dim"))
