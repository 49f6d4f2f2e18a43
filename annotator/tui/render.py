"""Rich Text for the screens, built from core objects.

Every string that came from a file or a judge is appended as plain text, never parsed as
markup, and through annotator.text.visible, so no control character in it reaches the terminal.
"""

from __future__ import annotations

from rich.text import Text

from annotator.models import Scale
from annotator.people.review import ChunkView, Review
from annotator.stats.chunk_agreement import Confusion, cohen_kappa
from annotator.stats.comparison import GoldenComparison
from annotator.stats.metrics import passes
from annotator.stats.stat import number
from annotator.text import visible
from annotator.verdict import Answer
from annotator.verdict import name as verdict_name

NARROW_BELOW = 100
"""Below this many columns a screen is narrow: the annotation screen folds its summary to one
line under the chunks, the statistics screen says what is undefined once per table."""
FOLD_CHARS = 500
"""A chunk longer than this shows folded until unfolded."""
FOLD_LINES = 8

STATE_TEXT = {
    "pending": ("pending", "dim"),
    "accepted": ("accepted", "green"),
    "flipped": ("flipped", "magenta"),
    "set": ("set", "cyan"),
    "imported": ("imported", "cyan"),
    "unsure": ("UNSURE: waits for an adjudicator", "bold yellow"),
}


def verdict_word(verdict: Answer | None) -> str:
    """useful / noise / unsure / -."""
    return "-" if verdict is None else verdict_name(verdict)


def bar(value: float | None, width: int = 10) -> str:
    """A small horizontal bar for a value in [0, 1]."""
    if value is None:
        return "·" * width
    full = round(value * width)
    return "█" * full + "░" * (width - full)


def fmt(value: float | None, digits: int = 4) -> str:
    """A number with fixed decimals, or '-'."""
    return "-" if value is None else f"{value:.{digits}f}"


def header(review: Review, session_name: str, narrow: bool = False) -> Text:
    """Golden i of N, progress, annotator, judge, session: progress first, so a narrow
    terminal cuts the names rather than the counts. ``narrow`` (below NARROW_BELOW columns)
    drops the badge and the labels, so the person's name, the judge and the file still fit
    in 80 columns: a person must see whose name their decisions go under."""
    text = Text(no_wrap=True, overflow="ellipsis")
    if narrow:
        text.append(f"golden {review.place + 1}/{len(review.golden_ids)}", style="bold")
    else:
        text.append(" cp-annotator ", style="bold reverse")
        text.append(f"  golden {review.place + 1} of {len(review.golden_ids)}", style="bold")
    if review.sampled:
        text.append(f" ({review.design}" + (" sample" if not narrow else "") + (
            f"; {review.stopping}" if review.stopping and not narrow else "") + ")")
    if review.totals_known:
        text.append(f"  chunks {review.chunks_decided}/{review.total_chunks}"
                    f"  {'done' if narrow else 'goldens complete'} {review.goldens_complete}/"
                    f"{len(review.golden_ids)}")
    else:
        text.append("  counting…", style="dim")
    if review.blind_rate:
        text.append(f"  blind {review.blind_rate:.0%}")
    text.append("  " if narrow else "  annotator ")
    text.append(visible(review.annotator), style="bold")
    text.append("  " if narrow else "  judge ")
    text.append(visible(review.judge or "(no judge)"), style="bold")
    text.append(f"  {visible(session_name)}")
    return text


def golden_panel(review: Review) -> Text:
    """The golden's id, question, reference, response and metadata."""
    golden = review.golden
    text = Text()
    text.append(visible(golden.id), style="bold underline")
    text.append("\nQuestion   ", style="bold")
    text.append(visible(golden.user_input))
    if golden.reference is not None:
        text.append("\nReference  ", style="bold")
        text.append(visible(golden.reference))
    elif golden.metadata.get("trec"):
        text.append("\nReference  ", style="bold")
        text.append("none: judge each passage's relevance to the query itself, as TREC does",
                    style="italic")
    if golden.response is not None:
        text.append("\nResponse   ", style="bold")
        text.append(visible(golden.response))
    shown = {k: v for k, v in golden.metadata.items() if k != "sample_note"}
    if shown:
        text.append("\nMetadata   ", style="bold")
        text.append(visible("  ".join(f"{k}={v}" for k, v in shown.items())), style="dim")
    return text


def chunk_card(view: ChunkView, p_judge: float | None, p_human: float | None, *,
               unfolded: bool, ranked: bool = True, scale: Scale | None = None) -> Text:
    """One ranked chunk: rank, precision@k bars, the judge's verdict and reason, the decision
    (on an unranked pool, its place in the pool and no P@k; on a graded session, the grades)."""
    rank = view.chunk.rank
    text = Text()
    text.append(f"#{rank}", style="bold")
    if ranked:
        text.append(f"   P@{rank} judge ")
        text.append(bar(p_judge), style="blue")
        text.append(f" {fmt(p_judge, 2)}   you ")
        text.append(bar(p_human), style="yellow")
        text.append(f" {fmt(p_human, 2)}")
    else:
        text.append("   (an unranked pool: no order, no P@k)", style="dim")
    text.append("\n")
    body = visible(view.chunk.text)
    lines = body.splitlines()
    if not unfolded and (len(body) > FOLD_CHARS or len(lines) > FOLD_LINES):
        shown = "\n".join(lines[:FOLD_LINES])[:FOLD_CHARS]
        text.append(shown)
        text.append(f" … [{len(body) - len(shown):,} more characters: o to unfold]", style="dim")
    else:
        text.append(body)
    text.append("\n")
    if view.hidden:
        text.append("judge  ", style="bold")
        text.append("hidden (blind): answer with 1 or 0 first" if scale is None else
                    f"hidden (blind): answer with a grade, 0 to {scale.top}, first",
                    style="italic")
    elif view.verdict is None:
        text.append("judge  ", style="bold")
        text.append("no verdict yet", style="dim")
    else:
        word = verdict_word(view.verdict.verdict)
        text.append("judge  ", style="bold")
        text.append(word.upper(), style="bold green" if view.verdict.verdict else "bold red")
        if scale is not None and view.verdict.grade is not None:
            text.append(f"  grade {_grade(scale, view.verdict.grade)}", style="bold")
        if view.verdict.p_relevant is not None:
            text.append(f"  P(useful) {view.verdict.p_relevant:.2f}", style="dim")
        if view.verdict.reason:
            text.append("  ")
            text.append(visible(view.verdict.reason), style="italic")
    text.append("\nyou    ", style="bold")
    label, style = STATE_TEXT[view.state]
    if view.decision is None:
        text.append(label, style=style)
    else:
        text.append(verdict_word(view.answer).upper(), style="bold")
        if scale is not None and view.label is not None and view.label.grade is not None:
            text.append(f"  grade {_grade(scale, view.label.grade)}", style="bold")
        text.append(f" ({label})", style=style)
        if view.label is not None and view.label.reason_wrong:
            text.append("  reason marked wrong", style="bold magenta")
    if view.blind and view.label is not None and view.label.blind_verdict is not None:
        text.append(f"  blind answer: {verdict_word(view.label.blind_verdict)}", style="dim")
    if view.label is not None and view.label.note:
        text.append("\nnote   ", style="bold")
        text.append(visible(view.label.note), style="yellow")
    return text


def _grade(scale: Scale, grade: int) -> str:
    """'2 highly relevant' on TREC's 0-3, else the number."""
    name = scale.name(grade)
    return str(grade) if name == str(grade) else f"{grade} {name}"


def summary(review: Review, golden: GoldenComparison) -> Text:
    """CP under both label sets, the difference, pass/fail, agreement so far."""
    if not review.ranked:
        return _agreement(review, golden, Text(
            "An unranked pool: its chunks have no order, so no CP and no P@k; agreement "
            "chunk by chunk below.\n\n", style="italic"))
    cp_judge, cp_human = golden.cp_judge(), golden.cp_human()
    mark = review.pass_mark
    text = Text()
    text.append("Context precision\n", style="bold underline")
    text.append("judge  ")
    if cp_judge is None and None in golden.judge:
        missing = sum(v is None for v in golden.judge)
        text.append(f"{missing} hidden or not judged", style="dim")
    else:
        text.append(fmt(cp_judge), style="bold")
        text.append(_pass(cp_judge, mark))
    text.append("\nyou    ")
    if cp_human is None:
        text.append(_waiting(review, golden), style="dim")
    else:
        text.append(fmt(cp_human), style="bold")
        text.append(_pass(cp_human, mark))
    if cp_judge is not None and cp_human is not None:
        diff = cp_judge - cp_human
        text.append("\ndiff   ")
        text.append(number(diff, sign=True), style="bold red" if abs(diff) > 0.1 else "bold")
        text.append(" judge - you", style="dim")
    text.append(f"\npass mark {mark:g}\n\n")
    return _agreement(review, golden, text)


def _agreement(review: Review, golden: GoldenComparison, text: Text) -> Text:
    """The summary's agreement part, after ``text``."""
    text.append("Agreement\n", style="bold underline")
    here = golden.confusion()
    text.append(f"golden   {_agree(here)}\n")
    text.append(f"         kappa {cohen_kappa(here).format(2)}\n", style="dim")
    if review.totals_known:
        text.append(f"overall  {_agree(review.overall)}\n")
        text.append(f"         kappa {cohen_kappa(review.overall).format(2)}", style="dim")
    else:
        text.append("overall  counting…\n", style="dim")
    text.append("\n\n? explains P@k, CP and the pass mark", style="dim")
    return text


def _waiting(review: Review, golden: GoldenComparison) -> str:
    """Why the person's CP is not there yet: "2 pending", "1 unsure", "2 pending, 1 unsure"."""
    unsure = sum(view.state == "unsure" for view in review.chunk_views())
    pending = len(golden.human) - golden.decided - unsure
    return ", ".join(f"{n} {what}" for n, what in ((pending, "pending"), (unsure, "unsure")) if n)


def summary_line(review: Review, golden: GoldenComparison) -> Text:
    """The summary on one line, for a narrow terminal: CP both ways, the pass mark, agreement."""
    cp_judge, cp_human = golden.cp_judge(), golden.cp_human()
    mark = review.pass_mark
    text = Text(no_wrap=True, overflow="ellipsis")
    if not review.ranked:
        overall = _agree(review.overall) if review.totals_known else "counting…"
        text.append(f"unranked pool: no CP  agree {_agree(golden.confusion())}"
                    f"  overall {overall}")
        text.append("  ? explains", style="dim")
        return text
    text.append("CP ", style="bold")
    text.append("judge ")
    if cp_judge is None:
        text.append("-", style="dim")
    else:
        text.append(fmt(cp_judge), style="bold")
        text.append(_pass(cp_judge, mark))
    text.append("  you ")
    if cp_human is None:
        text.append(_waiting(review, golden), style="dim")
    else:
        text.append(fmt(cp_human), style="bold")
        text.append(_pass(cp_human, mark))
    overall = _agree(review.overall) if review.totals_known else "counting…"
    text.append(f"  mark {mark:g}  agree {_agree(golden.confusion())}"
                f"  overall {overall}")
    text.append("  ? explains", style="dim")
    return text


def _pass(value: float | None, mark: float) -> Text:
    if value is None:
        return Text("")
    return Text(" pass", style="green") if passes(value, mark) else Text(" FAIL", style="red")


def _agree(c: Confusion) -> str:
    if c.n == 0:
        return "-"
    return f"{c.agreements}/{c.n} ({c.agreements / c.n:.0%})"
