"""Text from files and servers is data: no control character in it reaches a terminal, a
spreadsheet formula, or an SVG. Every command's output and every screen, with each sequence."""

from __future__ import annotations

import base64
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from annotator.cli import cli
from annotator.people.review import Review
from annotator.store.session import Session
from annotator.tui.app import AdjudicatorApp, AnnotatorApp
from tests.conftest import golden, write_lines
from tests.fake_openai import FakeOpenAI

SEQUENCES = {
    "osc52": "\x1b]52;c;ZXZpbA==\x07",  # writes the clipboard
    "osc8": "\x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\",  # a hidden hyperlink
    "title": "\x1b]0;pwned\x07",
    "csi": "\x1b[31mred\x1b[0m\x1b[2J",
    "dcs": "\x1bP1;2q\x1b\\",
    "c1": "\x9b31m\x85",  # an 8-bit CSI, a NEL
    "c0": "\x07\x08\x7f\x0b\x0c\r",
}
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""What may never reach an output: every C0 control but tab and newline, DEL, every C1."""


def hostile_goldens() -> list[dict[str, Any]]:
    """Two goldens whose every text field, name and note carries every sequence."""
    bad = "".join(SEQUENCES.values())
    out = []
    for i in range(2):
        out.append(golden(
            id=f"g{i}{bad}", user_input=f"question {bad}", reference=f"answer {bad}",
            retrieved_contexts=[f"chunk one {bad}", f"chunk two {bad}"],
            metadata={"retriever": f"bm25{bad}"},
            judges={f"judge{bad}": [{"verdict": 1, "reason": f"reason {bad}"},
                                    {"verdict": 0, "reason": f"=HYPERLINK() {bad}"}]},
            human_labels={f"alice{bad}": [1, i % 2], "bob": [i % 2, 0]},
            human_notes={f"alice{bad}": [f"note {bad}", None], "bob": [None, None]}))
    return out


@pytest.fixture
def db(tmp_path: Path) -> Path:
    source = write_lines(tmp_path / "hostile.jsonl", hostile_goldens())
    result = CliRunner().invoke(cli, ["import", str(source), "--session", str(tmp_path / "s.db")])
    assert result.exit_code == 0, result.output
    return tmp_path / "s.db"


def assert_clean(text: str, where: str) -> None:
    """No control character in the text, and the escapes are visible in it."""
    found = sorted({f"{ord(c):#04x}" for c in CONTROL.findall(text)})
    assert not found, f"{where} let through {found}"


def names(db: Path) -> tuple[str, str]:
    with Session(db) as session:
        return session.judges()[0].name, next(a for a in session.annotators() if a != "bob")


def test_every_command_shows_the_sequences_never_obeys_them(db: Path, tmp_path: Path) -> None:
    judge, alice = names(db)
    runner = CliRunner()
    other = tmp_path / "other.db"
    other.write_bytes(db.read_bytes())
    with Session(other) as session:  # a conflicting label, so merge prints its lines
        chunk = session.goldens()[0].chunks[0].id
        session.decide(alice, chunk, 0, "set")
        session.set_note(alice, chunk, "changed " + SEQUENCES["osc52"])
    commands = [
        ["info", str(db)],
        ["report", str(db), "--judge", judge, "--annotator", alice, "--bootstrap", "50"],
        ["report", str(db), "--judge", judge, "--all-annotators", "--format", "markdown",
         "--bootstrap", "0"],
        ["report", str(db), "--judge", judge, "--annotator", alice, "--format", "csv"],
        ["judges", str(db), "--annotator", alice, "--bootstrap", "0"],
        ["judges", str(db), "--annotator", alice, "--format", "csv", "--bootstrap", "0"],
        ["export", str(db), "--format", "csv"],
        ["export", str(db), "--format", "jsonl"],
        ["merge", str(db), str(other), "--output", str(tmp_path / "team.db")],
        ["report", str(db), "--judge", "nope" + SEQUENCES["title"]],  # an error naming it
    ]
    for args in commands:
        result = runner.invoke(cli, args)
        assert "Traceback" not in result.output, (args, result.output)
        assert_clean(result.stdout + result.stderr, " ".join(args[:2]))
        if args[0] in ("info", "report", "judges", "merge") and result.exit_code == 0:
            assert "␛" in result.stdout or "\\u001b" in result.stdout, args


def test_a_server_error_with_escape_sequences_is_shown_not_obeyed(db: Path) -> None:
    with FakeOpenAI() as server:
        server.default = "html_page"  # every call: a page, not a chat completion
        result = CliRunner().invoke(cli, ["judge", str(db), "--model", "m" + SEQUENCES["csi"],
                                          "--name", "j" + SEQUENCES["osc8"], "--max-retries",
                                          "0"], env={"OPENAI_API_KEY": "sk-x",
                                                     "OPENAI_BASE_URL": server.base_url})
    assert result.exit_code == 2 and "Traceback" not in result.output
    said = result.stdout + result.stderr
    assert_clean(said, "judge")
    assert "the server answered with an HTML page" in said


def test_csv_cells_never_start_a_formula_and_read_back(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "export.csv"
    assert CliRunner().invoke(cli, ["export", str(db), "--format", "csv", "-o", str(out)]
                              ).exit_code == 0
    import csv

    with out.open(encoding="utf-8", newline="") as handle:
        cells = [cell for row in csv.reader(handle) for cell in row]
    assert cells and not [c for c in cells if c[:1] in ("=", "+", "-", "@", "\t", "\r")]
    chunks = tmp_path / "chunks.csv"
    judge, alice = names(db)
    assert CliRunner().invoke(cli, ["report", str(db), "--judge", judge, "--annotator", alice,
                                    "--format", "csv", "-o", str(chunks)]).exit_code == 0
    text = chunks.read_text(encoding="utf-8")
    assert "'=HYPERLINK() ␛]52" in text
    # The JSONL export stays byte-exact: the sequences are in it as JSON escapes.
    jsonl = CliRunner().invoke(cli, ["export", str(db), "--format", "jsonl"]).stdout
    assert json.loads(jsonl.splitlines()[0])["user_input"].endswith(
        "".join(SEQUENCES.values()))


def _svg_text(app: Any) -> str:
    return str(app.export_screenshot())


async def test_every_screen_shows_the_sequences_never_obeys_them(db: Path) -> None:
    judge, alice = names(db)
    with Session(db) as session:
        app = AnnotatorApp(Review(session, alice, judge), "s.db" + SEQUENCES["title"])
        async with app.run_test(size=(130, 46)) as pilot:
            await pilot.press("c")  # the comment box opens on the note
            await pilot.press("escape")
            await pilot.pause()
            assert_clean(_svg_text(app), "the annotation screen")
            assert "␛]52;c;ZXZpbA==" in _svg_text(app)
            for key in ("g", "s", "question_mark"):
                await pilot.press(key)
                await pilot.app.workers.wait_for_complete()
                await pilot.pause()
                assert_clean(_svg_text(app), f"the screen after {key}")
                await pilot.press("escape")
                await pilot.pause()
        from annotator.people.adjudication import Adjudication

        adjudicator = AdjudicatorApp(Adjudication(session, "carol"), "s.db")
        async with adjudicator.run_test(size=(130, 46)) as pilot:
            await pilot.pause()
            text = _svg_text(adjudicator)
            assert_clean(text, "the adjudication screen")
            assert "␛" in text


def test_the_html_report_has_no_control_characters_and_valid_svg_charts(db: Path,
                                                                        tmp_path: Path) -> None:
    judge, alice = names(db)
    out = tmp_path / "report.html"
    result = CliRunner().invoke(cli, ["report", str(db), "--judge", judge, "--annotator", alice,
                                      "--format", "html", "-o", str(out), "--bootstrap", "50"])
    assert result.exit_code == 0, result.output
    html = out.read_text(encoding="utf-8")
    assert_clean(html, "the HTML report")
    charts = re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', html)
    assert charts
    for data in charts:
        ET.fromstring(base64.b64decode(data))  # valid XML, ids and all
