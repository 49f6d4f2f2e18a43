"""The adjudication screen: one disputed chunk at a time, each person's label, your gold label."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from annotator.errors import NotSaved
from annotator.people.adjudication import Adjudication
from annotator.people.review import Outcome
from annotator.text import visible
from annotator.tui.keys import ADJUDICATE_KEYS, bindings
from annotator.tui.render import verdict_word
from annotator.verdict import UNSURE, Answer

INTRO = (
    "These are the chunks people labelled differently. Read each person's label and note, "
    "and the judges' verdicts, then give the gold label with 1 (useful) or 0 (noise). It is "
    "stored with your name before the screen moves on, and the leaderboard scores judges "
    "against it."
)


ANSWER_STYLES: dict[Answer, str] = {1: "green", 0: "red", UNSURE: "bold yellow"}


def dispute_text(adjudication: Adjudication) -> Text:
    """The golden, the disputed chunk, every opinion and judge verdict, and the gold label."""
    dispute = adjudication.current
    golden, chunk = dispute.golden, dispute.chunk
    text = Text()
    text.append(visible(golden.id), style="bold underline")
    text.append(f"  rank {chunk.rank} of {len(golden.chunks)}", style="bold")
    text.append("\nQuestion   ", style="bold")
    text.append(visible(golden.user_input))
    if golden.reference is not None:
        text.append("\nReference  ", style="bold")
        text.append(visible(golden.reference))
    text.append("\n\nChunk\n", style="bold")
    text.append(visible(chunk.text))
    text.append("\n\nPeople\n", style="bold")
    for opinion in dispute.opinions:
        text.append(f"  {visible(opinion.annotator)}: ", style="bold")
        text.append(verdict_word(opinion.verdict).upper(), style=ANSWER_STYLES[opinion.verdict])
        if opinion.note:
            text.append("  ")
            text.append(visible(opinion.note), style="yellow")
        text.append("\n")
    if dispute.verdicts:
        text.append("Judges\n", style="bold")
        for verdict in dispute.verdicts:
            text.append(f"  {visible(verdict.judge)}: ", style="bold")
            # Written as the annotation screen writes it, for a person and a judge alike.
            text.append(verdict_word(verdict.verdict).upper(),
                        style=ANSWER_STYLES[verdict.verdict])
            if verdict.reason:
                text.append("  ")
                text.append(visible(verdict.reason), style="italic")
            text.append("\n")
    text.append("\nGold   ", style="bold")
    gold = adjudication.gold.get(chunk.id)
    if gold is None:
        text.append("not settled: 1 useful, 0 noise", style="dim")
    else:
        text.append(verdict_word(gold.verdict).upper(), style="bold reverse")
        text.append(f"  decided by {gold.decided_by}", style="dim")
    if note := adjudication.note_of(chunk.id):
        text.append("\nNote   ", style="bold")
        text.append(visible(note), style="yellow")
    return text


class AdjudicateScreen(Screen[None]):
    """Every key calls one Adjudication method, then the screen redraws."""

    BINDINGS = bindings(ADJUDICATE_KEYS)

    def __init__(self, adjudication: Adjudication, session_name: str) -> None:
        super().__init__()
        self.adjudication = adjudication
        self.session_name = session_name

    def compose(self) -> ComposeResult:
        yield Static(id="header")
        with VerticalScroll(id="dispute-scroll"):
            yield Static(id="dispute")
        yield Static(id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.redraw()

    def redraw(self, message: str = "") -> None:
        """Bring the screen up to date with the adjudication."""
        adj = self.adjudication
        header = Text(no_wrap=True, overflow="ellipsis")
        header.append(" cp-annotator ", style="bold reverse")
        header.append(f"  {self.session_name}  adjudicating as ")
        header.append(adj.adjudicator, style="bold")
        header.append(f"  dispute {adj.index + 1} of {len(adj.disputes)}", style="bold")
        header.append(f"  settled {adj.settled}/{len(adj.disputes)}")
        self.query_one("#header", Static).update(header)
        self.query_one("#dispute", Static).update(dispute_text(adj))
        status = self.query_one("#status", Static)
        status.update(Text(visible(message)))

    def action_decide(self, verdict: int) -> None:
        try:
            more = self.adjudication.decide(verdict)
        except NotSaved as busy:  # nothing was saved; the dispute stays as it was
            self.redraw(f"Not saved: {busy}")
            return
        self.redraw("Saved." if more else "Every dispute is settled; q quits, or keep reviewing.")

    def action_undo(self) -> None:
        try:
            undone = self.adjudication.undo()
        except NotSaved as busy:
            self.redraw(f"Not undone: {busy}")
            return
        self.redraw("Took back your last gold label." if undone else "Nothing to undo.")

    def action_move(self, delta: int) -> None:
        self.adjudication.move(delta)
        self.redraw()

    def action_comment(self) -> None:
        from annotator.tui.screens.comment import CommentModal

        adj = self.adjudication

        def save(note: str) -> Outcome:
            try:
                saved = adj.note(note)
            except NotSaved as busy:  # the box stays open: what is typed next stays a note
                return Outcome(False, f"Note not saved: {busy}")
            return Outcome(True, "Note saved." if saved else
                           "Note kept: it is saved with the gold label you give next (1 or 0).")

        def said(outcome: Outcome | None) -> None:
            if outcome is not None:
                self.redraw(outcome.message)

        self.app.push_screen(CommentModal(adj.current.chunk.rank,
                                          adj.note_of(adj.current.chunk.id), save), said)

    def action_help(self) -> None:
        from annotator.tui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(ADJUDICATE_KEYS, INTRO))
