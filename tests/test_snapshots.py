"""What a person sees, as SVG snapshots (update with: pytest tests/test_snapshots.py --snapshot-update)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from annotator.formats import read_goldens
from annotator.people.review import Review
from annotator.store.session import Session
from annotator.tui.app import AnnotatorApp
from tests.conftest import ROOT, banking_file, golden, second_opinion, write_lines

SIZE = (130, 46)
Snap = Callable[..., bool]


def app_on(tmp_path: Path, source: Path, judge: str | None = "sample-judge",
           **kwargs: Any) -> AnnotatorApp:
    session = Session(tmp_path / "snap.db")
    session.import_goldens(read_goldens(source), path=source.name)
    return AnnotatorApp(Review(session, "alice", judge, **kwargs), "banking.db")


@pytest.fixture
def banking(tmp_path: Path) -> AnnotatorApp:
    return app_on(tmp_path, ROOT / "sample_sessions" / "banking.jsonl")


def test_main_screen(banking: AnnotatorApp, snap_compare: Snap) -> None:
    # Three decisions in: accepted, flipped (a disagreement), and the cursor on rank 3.
    assert snap_compare(banking, press=["a", "f"], terminal_size=SIZE)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_main_screen_at_common_terminal_sizes(banking: AnnotatorApp, snap_compare: Snap,
                                              size: tuple[int, int]) -> None:
    assert snap_compare(banking, press=["a", "f"], terminal_size=size)


def test_help_screen_explains_the_numbers(banking: AnnotatorApp, snap_compare: Snap) -> None:
    assert snap_compare(banking, press=["question_mark", "end"], terminal_size=SIZE)


def test_main_screen_blind_chunk(tmp_path: Path, snap_compare: Snap) -> None:
    app = app_on(tmp_path, ROOT / "sample_sessions" / "banking.jsonl", blind_rate=1.0)
    # Rank 1 answered blind and revealed; rank 2 still hidden.
    assert snap_compare(app, press=["0", "j"], terminal_size=SIZE)


def test_main_screen_long_chunk(tmp_path: Path, snap_compare: Snap) -> None:
    long_text = " ".join(f"Sentence {i} of a very long retrieved chunk." for i in range(3000))
    source = write_lines(tmp_path / "long.jsonl", [golden(
        retrieved_contexts=[long_text, "Rural ₹2,500."], judge="j",
        judge_verdicts=[{"verdict": 1, "reason": "Long but useful."},
                        {"verdict": 0, "reason": "Too short."}])])
    assert snap_compare(app_on(tmp_path, source, "j"), terminal_size=SIZE)


def test_main_screen_markup_like_text(tmp_path: Path, snap_compare: Snap) -> None:
    source = write_lines(tmp_path / "odd.jsonl", [golden(
        user_input="Is [/b] a tag? And list[int]?", reference="<s>[INST] yes [/INST]",
        retrieved_contexts=["[link=x]not a link[/link] [bold]not bold[/bold]",
                            "emoji 🧪 and RTL עברית", "[/]"], judge="j",
        judge_verdicts=[{"verdict": 1, "reason": "[red]not red[/red]"}, None,
                        {"verdict": 0, "reason": "[/b]"}])])
    assert snap_compare(app_on(tmp_path, source, "j"), terminal_size=SIZE)


def pressed_then_computed(*keys: str) -> Callable[[Pilot[None]], Awaitable[None]]:
    """Press keys, then wait for the screen's worker (the queue and statistics compute in one)."""
    async def run(pilot: Pilot[None]) -> None:
        await pilot.press(*keys)
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()

    return run


def test_queue_screen(banking: AnnotatorApp, snap_compare: Snap) -> None:
    assert snap_compare(banking, run_before=pressed_then_computed("a", "f", "a", "a", "a", "g"),
                        terminal_size=SIZE)


def test_statistics_screen(banking: AnnotatorApp, snap_compare: Snap) -> None:
    assert snap_compare(banking, run_before=pressed_then_computed("a", "f", "a", "a", "a", "s"),
                        terminal_size=SIZE)


def test_help_screen(banking: AnnotatorApp, snap_compare: Snap) -> None:
    assert snap_compare(banking, press=["question_mark"], terminal_size=SIZE)


def test_adjudication_screen(tmp_path: Path, snap_compare: Snap) -> None:
    from annotator.people.adjudication import Adjudication
    from annotator.tui.app import AdjudicatorApp

    session = Session(banking_file(tmp_path / "team.db"))
    disputed = session.chunk_ids()[session.golden_ids()[1]][0]
    second_opinion(session, "bob", {disputed})
    session.set_note("bob", disputed, "Only says where, not the [b]penalty[/b] 🧾")
    app = AdjudicatorApp(Adjudication(session, "carol"), "team.db")
    # The dispute settled as useful: the gold label with who decided it.
    assert snap_compare(app, press=["1"], terminal_size=SIZE)
