"""The documents the tool writes, pinned byte for byte: a refactor that changes one number, word
or column of a report or a leaderboard fails here.

Each sample session is imported afresh and its report (JSON, Markdown, HTML) and leaderboard
(JSON, CSV) written with a fixed bootstrap seed, then compared with tests/approved/. After a
change meant to alter them: `scripts/test.sh tests/test_approved.py --approve`, and read the
diff before committing it. The HTML's charts are matplotlib's bytes (they change with its
release, not with ours): each is compared as a placeholder naming the chart; the numbers they
draw are in the JSON.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from annotator.cli import cli
from tests.conftest import ROOT

APPROVED = ROOT / "tests" / "approved"
SAMPLES = {
    "banking": ROOT / "sample_sessions" / "banking.jsonl",
    "insurance": ROOT / "sample_sessions" / "insurance.jsonl",
    "software_docs": ROOT / "sample_sessions" / "software_docs.jsonl",
    "team": ROOT / "sample_sessions" / "team" / "banking.jsonl",
}
WHO = {"team": ["--all-annotators"]}
"""Options choosing whose labels a sample's report reads (the team sample has two people)."""
REPORTS = ["json", "markdown", "html"]
BOARDS = ["json", "csv"]
CHART = re.compile(r"data:image/svg\+xml;base64,[A-Za-z0-9+/=]+")


def documents() -> list[tuple[str, str, str]]:
    """(sample, command, format) of every pinned document. The banking sample has no person's
    labels, so it has a report (saying to annotate first) and no leaderboard."""
    out = [(s, "report", f) for s in SAMPLES for f in REPORTS]
    return out + [(s, "judges", f) for s in SAMPLES if s != "banking" for f in BOARDS]


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every sample imported into a session file named after it (the report names the file)."""
    where = tmp_path_factory.mktemp("approved")
    for name, source in SAMPLES.items():
        done = CliRunner().invoke(cli, ["import", str(source), "--session",
                                        str(where / f"{name}.db")])
        assert done.exit_code == 0, done.output
    return where


def written(where: Path, sample: str, command: str, fmt: str) -> str:
    """The document as the command writes it to a file, run from the sessions' folder (so the
    report names the session file as a person would have typed it)."""
    out = where / f"{sample}-{command}.{fmt}"
    args = [command, f"{sample}.db", "--format", fmt, "--output", out.name]
    if command == "report":
        args += [*WHO.get(sample, []), "--bootstrap", "200", "--seed", "0"]
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(where)
        done = CliRunner().invoke(cli, args)
    assert done.exit_code == 0, done.output
    text = out.read_text(encoding="utf-8")
    return CHART.sub("data:image/svg+xml;base64,CHART", text) if fmt == "html" else text


@pytest.mark.parametrize(("sample", "command", "fmt"), documents(),
                         ids=["-".join(d) for d in documents()])
def test_the_document_is_the_approved_one(sessions: Path, sample: str, command: str, fmt: str,
                                          request: pytest.FixtureRequest) -> None:
    text = written(sessions, sample, command, fmt)
    approved = APPROVED / f"{sample}-{command}.{fmt}"
    if request.config.getoption("--approve"):
        APPROVED.mkdir(exist_ok=True)
        approved.write_text(text, encoding="utf-8")
    assert approved.exists(), f"no approved {approved.name}: run with --approve and read it"
    expected = approved.read_text(encoding="utf-8")
    if text != expected:
        lines = [(i, a, b) for i, (a, b) in enumerate(
            zip(expected.splitlines(), text.splitlines(), strict=False), 1) if a != b]
        first = lines[0] if lines else (min(len(expected), len(text)), "(end)", "(end)")
        pytest.fail(f"{approved.name} changed; first at line {first[0]}:\n- {first[1]}\n+ "
                    f"{first[2]}\n(meant? scripts/test.sh tests/test_approved.py --approve)")


def test_every_approved_file_is_still_made() -> None:
    """An approved file no command writes any more is a stale pin: removed with its document."""
    made = {f"{s}-{c}.{f}" for s, c, f in documents()}
    assert {p.name for p in APPROVED.iterdir()} == made
