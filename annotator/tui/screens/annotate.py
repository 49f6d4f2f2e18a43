"""The annotation screen: one golden, its ranked chunks, the judge's verdicts, your decisions."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static
from textual.worker import get_current_worker

from annotator.errors import NotSaved, ReadStopped
from annotator.models import Guideline, ReviewTotals
from annotator.people.review import Outcome, Review
from annotator.stats.metrics import precision_at_k_so_far
from annotator.text import visible
from annotator.tui import render
from annotator.tui.keys import bindings
from annotator.tui.render import NARROW_BELOW
from annotator.tui.widgets.chunk_card import ChunkCard
from annotator.verdict import kind_named

SHORT_BELOW = 30
"""Below this many lines the golden's panel gets fewer lines."""


class AnnotateScreen(Screen[None]):
    """The main screen. Every key calls one Review method, then the screen redraws."""

    BINDINGS = bindings()

    def __init__(self, review: Review, session_name: str) -> None:
        super().__init__()
        self.review = review
        self.session_name = session_name
        self._shown_golden: str | None = None
        self._guidelines_open = False

    def compose(self) -> ComposeResult:
        yield Static(id="header")
        with VerticalScroll(id="golden-scroll"):
            yield Static(id="golden")
        with Horizontal(id="body"):
            yield VerticalScroll(id="chunks")
            yield Static(id="summary")
        yield Static(id="summary-line")
        yield Static(id="status")
        yield Footer()

    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (NARROW_BELOW, "-wide")]  # noqa: RUF012
    VERTICAL_BREAKPOINTS = [(0, "-short"), (SHORT_BELOW, "-tall")]  # noqa: RUF012

    def on_resize(self) -> None:
        self.query_one("#header", Static).update(
            render.header(self.review, self.session_name, self.size.width < NARROW_BELOW),
            layout=False)
        # A narrow footer drops its spacing and the palette hint, so a f 1 0 u g s ? q fit in 80.
        footer = self.query_one(Footer)
        footer.compact = self.size.width < NARROW_BELOW
        footer.show_command_palette = self.size.width >= NARROW_BELOW
        self.call_after_refresh(self._mark_golden_overflow)

    POLL_SECONDS = 1.0
    """How often to look for verdicts a judge running elsewhere has stored."""

    def on_mount(self) -> None:
        self.redraw()
        self.set_interval(self.POLL_SECONDS, self._poll_verdicts)
        if self.review.quota is not None:  # keep the claim on the golden being read
            self.set_interval(self.review.quota.renew_every_s, self._renew)
        if not self.review.totals_known:
            self._count()

    def _poll_verdicts(self) -> None:
        if self.review.refresh_verdicts():
            self.redraw()
            self._count()

    def _renew(self) -> None:
        if (lost := self.review.renew()) is not None:
            self.say(lost)

    def on_unmount(self) -> None:
        # The totals worker's thread would keep the process alive till its read ends (a
        # second at a million chunks): a person who quits does not wait for it.
        self.review.stop_counting()
        self.review.leave()

    @work(thread=True, exclusive=True, group="totals")
    def _count(self) -> None:
        """Read the session-wide totals off the UI thread; the header says counting… till then."""
        try:
            totals = self.review.count()
        except ReadStopped:
            return  # the screen is closing
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._counted, totals)

    def _counted(self, totals: ReviewTotals) -> None:
        self.review.apply(totals)
        if self.is_attached:
            self.redraw()

    # -- drawing --------------------------------------------------------------------------------

    def redraw(self) -> None:
        """Bring every part of the screen up to date with the review."""
        review = self.review
        # One-line widgets (app.tcss): their size never changes, so no layout pass.
        self.query_one("#header", Static).update(
            render.header(review, self.session_name, self.size.width < NARROW_BELOW),
            layout=False)
        views = review.chunk_views()
        comparison = review.comparison()
        p_judge = precision_at_k_so_far(comparison.judge)
        p_human = precision_at_k_so_far(comparison.human)
        container = self.query_one("#chunks", VerticalScroll)
        cards = list(container.query(ChunkCard))
        new_golden = self._shown_golden != review.golden.id
        if new_golden:
            self._shown_golden = review.golden.id
            self.query_one("#golden", Static).update(render.golden_panel(review))
            self._offer_guidelines()
        # Reuse the cards in place; mount or remove only the difference in chunk count.
        for i, view in enumerate(views):
            if i < len(cards):
                if new_golden:
                    cards[i].unfolded = False
                cards[i].show(view, p_judge[i], p_human[i])
            else:
                container.mount(ChunkCard(view, p_judge[i], p_human[i], ranked=review.ranked,
                                          scale=review.scale))
        for card in cards[len(views):]:
            card.remove()
        if new_golden:
            container.scroll_home(animate=False)
        self.query_one("#summary", Static).update(render.summary(review, comparison))
        self.query_one("#summary-line", Static).update(render.summary_line(review, comparison),
                                                       layout=False)
        self.call_after_refresh(self._select_card)

    def _mark_golden_overflow(self) -> None:
        # The panel's bottom border says when the golden is cut short, and how to read it all.
        panel = self.query_one("#golden-scroll", VerticalScroll)
        if panel.has_class("-expanded"):
            panel.border_subtitle = "e shrinks"
        else:
            panel.border_subtitle = "more: e expands" if panel.max_scroll_y > 0 else ""

    def _select_card(self) -> None:
        self._mark_golden_overflow()
        cards = list(self.query_one("#chunks", VerticalScroll).query(ChunkCard))
        for i, card in enumerate(cards):
            card.set_class(i == self.review.cursor, "-selected")
        if cards:
            self.query_one("#chunks", VerticalScroll).scroll_to_widget(
                cards[self.review.cursor], animate=False, top=False)

    def say(self, outcome: Outcome) -> None:
        """Show an outcome on the status line (errors in red) and redraw."""
        status = self.query_one("#status", Static)
        # It may name a golden: never markup. One line: no layout pass.
        status.update(Text(visible(outcome.message)), layout=False)
        status.set_class(not outcome.ok, "-error")
        self.redraw()

    # -- actions (names from annotator.tui.keys) ------------------------------------------------

    def action_accept(self) -> None:
        self.say(self.review.accept())

    def action_flip(self) -> None:
        self.say(self.review.flip())

    def action_set(self, verdict: int) -> None:
        self.say(self.review.set(verdict))

    def action_undo(self) -> None:
        self.say(self.review.undo())

    def action_move(self, delta: int) -> None:
        if (outcome := self.review.move(delta)) is not None:
            self.say(outcome)
        else:
            self._select_card()

    def action_next_golden(self) -> None:
        self.say(self.review.next_golden())

    def action_previous_golden(self) -> None:
        self.say(self.review.previous_golden())

    def action_unfold(self) -> None:
        cards = list(self.query(ChunkCard))
        card = cards[self.review.cursor]
        card.unfolded = not card.unfolded
        self.redraw()

    def action_expand(self) -> None:
        panel = self.query_one("#golden-scroll", VerticalScroll)
        panel.toggle_class("-expanded")
        self.call_after_refresh(self._mark_golden_overflow)

    def _with_note(self, then: Callable[[str], Outcome], prompt: str | None = None,
                   current: str | None = None) -> None:
        """Open the note box on the selected chunk; it saves through ``then`` and stays open
        while ``then`` refuses (escape: nothing is written)."""
        from annotator.tui.screens.comment import CommentModal

        def saved(outcome: Outcome | None) -> None:
            if outcome is not None:
                self.say(outcome)

        self.app.push_screen(CommentModal(self.review.selected.chunk.rank, current, then, prompt),
                             saved)

    def action_comment(self) -> None:
        label = self.review.selected.label
        self._with_note(self.review.comment, current=label.note if label else None)

    def action_answer(self, word: str) -> None:
        """Answer with a kind of answer by its word (verdict.KINDS), asking for its note
        first where the kind needs one."""
        kind = kind_named(word)
        if not kind.needs_note:
            self.say(self.review.answer_as(word))
            return
        view = self.review.selected
        self._with_note(lambda note: self.review.answer_as(word, note),
                        f"{word.capitalize()} of rank {view.chunk.rank}: {kind.asks}? (needed; "
                        "enter saves, escape cancels)", view.label.note if view.label else None)

    def action_reason_wrong(self) -> None:
        view = self.review.selected
        if (refused := self.review.needs_shown_verdict(view)) is not None:
            self.say(refused)
            return
        self._with_note(self.review.reason_wrong,
                        f"The judge's verdict on rank {view.chunk.rank} stands; what is wrong "
                        "with its reason? (optional; enter saves, escape cancels)")

    def action_queue(self) -> None:
        from annotator.tui.screens.queue import QueueScreen

        def jump(golden_id: str | None) -> None:
            if golden_id is not None:
                self.say(self.review.go_to(golden_id))

        self.app.push_screen(QueueScreen(self.review), jump)

    def action_stats(self) -> None:
        from annotator.tui.screens.stats import StatsScreen

        self.app.push_screen(StatsScreen(self.review))

    def action_guidelines(self) -> None:
        guideline = self.review.session.guideline()
        if guideline is None:
            self.say(Outcome(False, "No guidelines yet: 'annotator guidelines SESSION set "
                                    "FILE.md' sets them."))
            return
        self._show_guidelines(guideline, new=False)

    def _offer_guidelines(self) -> None:
        """Before a golden: the guidelines in force when this person has not been shown them."""
        from annotator.people.guidelines import due

        if self._guidelines_open or (guideline := due(self.review.session,
                                                      self.review.annotator)) is None:
            return
        self._show_guidelines(guideline, new=True)

    def _show_guidelines(self, guideline: Guideline, *, new: bool) -> None:
        from annotator.tui.screens.guidelines import GuidelinesScreen

        def closed(_: None) -> None:
            self._guidelines_open = False
            # Shown is read: recorded once closed, so a screen killed while they were up
            # shows them again next time.
            if self.review.session.guidelines_read(self.review.annotator) < guideline.version:
                with contextlib.suppress(NotSaved):
                    self.review.session.read_guidelines(self.review.annotator, guideline.version)

        self._guidelines_open = True
        self.app.push_screen(GuidelinesScreen(guideline, new=new), closed)

    def action_help(self) -> None:
        from annotator.tui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(pass_mark=self.review.pass_mark))

    @on(ChunkCard.Selected)
    def _select_clicked(self, message: ChunkCard.Selected) -> None:
        self.review.select(message.rank - 1)
        self._select_card()
