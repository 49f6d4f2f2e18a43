"""What a new answer kind, report section and importer cost, measured: each is added to a copy
of the package by editing only the files docs/architecture.md names for it, then used end to
end in a process of its own. A change that makes any of them need one more file fails here."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.conftest import ROOT


def package_copy(tmp_path: Path) -> Path:
    """A copy of the annotator package (its caches left out) in a folder of its own."""
    root = tmp_path / "copy"
    shutil.copytree(ROOT / "annotator", root / "annotator",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return root


def edit(root: Path, path: str, old: str, new: str) -> None:
    """Replace one exact, unique piece of a file of the copy."""
    target = root / path
    text = target.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{path}: {old!r} is not there exactly once"
    target.write_text(text.replace(old, new), encoding="utf-8")


def changed(root: Path) -> set[str]:
    """The files of the copy that differ from the package."""
    out = set()
    for path in (root / "annotator").rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts:
            relative = path.relative_to(root)
            original = ROOT / relative
            if not original.exists() or original.read_bytes() != path.read_bytes():
                out.add(str(relative))
    return out


def run(root: Path, script: str, cwd: Path) -> str:
    """Run a script with the copy first on the path; its output (it must succeed)."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], cwd=cwd,
                          capture_output=True, text=True, timeout=600,
                          env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin",
                               "PYTHONDONTWRITEBYTECODE": "1"})
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_a_new_answer_kind_is_four_files(tmp_path: Path) -> None:
    root = package_copy(tmp_path)
    edit(root, "annotator/verdict.py", '''    Kind(DISTRACTOR, DISTRACTOR, NOISE),
)''', '''    Kind(DISTRACTOR, DISTRACTOR, NOISE),
    Kind("unreadable", "unreadable", None, needs_note=True, asks="what cannot be read"),
)''')
    edit(root, "annotator/verdict.py", '"unsure", "distractor"]', '"unsure", "distractor", '
         '"unreadable"]')
    migrations = (root / "annotator/store/migrations.py").read_text(encoding="utf-8")
    (root / "annotator/store/migrations.py").write_text(migrations + textwrap.dedent('''

        @migrations()
        def m099_unreadable(db: Database) -> None:
            """A kind of answer that is no verdict: the chunk cannot be read."""
            rebuild_answer_tables(db, "m099", _M012_ANSWER.replace(
                "'distractor'))", "'distractor', 'unreadable'))"))
        '''), encoding="utf-8")
    edit(root, "annotator/store/versions.py", '"m016_team")', '"m016_team", "m099_unreadable")')
    key = """    Key("z", "z", "answer('unreadable')", "Unreadable", "It cannot be read.",
        footer=False),
"""
    edit(root, "annotator/tui/keys.py", '''    Key("r", "r", "reason_wrong",''',
         key + '''    Key("r", "r", "reason_wrong",''')
    # The new file's schema is generated, not written by hand.
    run(root, "from annotator.store.schema import main; main()", tmp_path)
    assert changed(root) - {"annotator/store/schema.sql"} == {
        "annotator/verdict.py", "annotator/store/migrations.py", "annotator/store/versions.py",
        "annotator/tui/keys.py"}
    out = run(root, f"""
        from annotator.formats import read_goldens
        from annotator.people.review import Review
        from annotator.store.session import Session
        from annotator.tui.keys import KEYS
        from annotator.verdict import KINDS

        with Session("new.db") as session:
            sample = {str(ROOT / "sample_sessions" / "banking.jsonl")!r}
            session.import_goldens(read_goldens(sample), path=sample)
            review = Review(session, "alice", "sample-judge")
            refused = review.answer_as("unreadable")
            assert not refused.ok and "needs a note saying what cannot be read" in refused.message
            assert review.answer_as("unreadable", "scanned as an image").ok
            chunk = review.golden.chunks[0].id
            label = session.labels("alice")[chunk]
            columns = session.label_columns("alice", session.chunk_frame())
            print("label", label.answer, label.verdict, label.note)
            print("columns", int(columns.of_kind("unreadable").sum()),
                  int(columns.answered.sum()), int(columns.unsettled.sum()))
            undone = session.undo("alice")
            print("undo", undone.undone, undone.restored)
            print("key", [k.keys for k in KEYS if k.action == "answer('unreadable')"])
        """, tmp_path)
    assert out.splitlines() == ["label unreadable None scanned as an image", "columns 1 1 1",
                                "undo unreadable None", "key ['z']"]


def test_the_costs_measured_here_are_the_ones_the_docs_give() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert re.search(r"\*\*An answer kind\*\*[^*]*four files", text)
    listed = (ROOT / "docs" / "development.md").read_text(encoding="utf-8")
    for row in ("| answer kind | 4:", "| report section | 1 + 1 line:",
                "| leaderboard section | 1 + 1 line:", "| importer | 2:"):
        assert row in listed


def test_a_new_importer_is_two_files(tmp_path: Path) -> None:
    root = package_copy(tmp_path)
    (root / "annotator/importers/tabbed.py").write_text(textwrap.dedent('''
        """A toy tracer's export: {"tabbed": [{"trace", "question", "answer", "docs"}]}."""

        from __future__ import annotations

        from collections.abc import Iterable
        from typing import Any

        from annotator.importers.spans import Retrieval, gathered, trace_goldens

        NAME = "tabbed"
        KIND_OF_FILE = "a tabbed export ('tabbed')"


        def detect(document: Any, /) -> bool:
            """Whether a document is a tabbed export."""
            return isinstance(document, dict) and isinstance(document.get("tabbed"), list)


        def rows(documents: Iterable[tuple[int | None, Any]], name: str, notices: list[str],
                 /, *, retriever: str | None = None) -> list[dict[str, Any]]:
            """One golden a trace."""
            traces = [t for _, document in documents for t in document["tabbed"]]
            return gathered((trace_goldens(NAME, t["trace"], [Retrieval("s1", t["question"],
                                                                        t["docs"])],
                                           response=t["answer"]) for t in traces),
                            len(traces), name, notices, "'tabbed'")
        ''').lstrip(), encoding="utf-8")
    edit(root, "annotator/importers/__init__.py",
         "from annotator.importers import langfuse, mlflow, openinference",
         "from annotator.importers import langfuse, mlflow, openinference, tabbed")
    edit(root, "annotator/importers/__init__.py",
         "IMPORTERS: tuple[Importer, ...] = (openinference, mlflow, langfuse)",
         "IMPORTERS: tuple[Importer, ...] = (openinference, mlflow, langfuse, tabbed)")
    edit(root, "annotator/importers/__init__.py", '"langfuse": langfuse}',
         '"langfuse": langfuse, "tabbed": tabbed}')
    assert changed(root) == {"annotator/importers/tabbed.py", "annotator/importers/__init__.py"}
    (tmp_path / "export.json").write_text(
        '{"tabbed": [{"trace": "t1", "question": "Q?", "answer": "A.", "docs": ["a", "b"]},'
        ' {"trace": "t2", "question": "R?", "answer": "B.", "docs": ["c"]}]}', encoding="utf-8")
    out = run(root, """
        from annotator import api
        from annotator.store.session import Session

        [named] = api.import_goldens("named.db", "export.json", source="tabbed")
        [found] = api.import_goldens("found.db", "export.json")  # detected without --from
        with Session("found.db") as session:
            golden = session.golden("t1")
            print(named.goldens_added, found.goldens_added, golden.user_input,
                  [c.text for c in golden.chunks], golden.metadata["source"])
        """, tmp_path)
    assert out.split() == ["2", "2", "Q?", "['a',", "'b']", "tabbed"]
    done = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental",
                           "--config-file", str(ROOT / "pyproject.toml"),
                           str(root / "annotator" / "importers")],
                          capture_output=True, text=True, timeout=600, cwd=root)
    assert "Success" in done.stdout, done.stdout  # the Importer Protocol holds for it


def test_a_new_report_section_is_one_file_and_one_line(tmp_path: Path) -> None:
    root = package_copy(tmp_path)
    (root / "annotator/report/sections/lengths.py").write_text(textwrap.dedent('''
        """How long the chunks are: a section whose data type lives in its own file."""

        from __future__ import annotations

        from dataclasses import dataclass
        from typing import Any

        from annotator.report.blocks import Block, Paragraphs
        from annotator.report.inputs import Columns, Inputs
        from annotator.report.model import Report
        from annotator.report.section import Section
        from annotator.stats.bootstrap import ClusterSums, Estimates


        @dataclass(frozen=True, slots=True)
        class Lengths:
            """The chunks compared, and how many of them."""

            goldens: int


        def prepare(inputs: Inputs, columns: Columns, sums: ClusterSums) -> int:
            """The goldens compared."""
            return len(inputs.golden_ids)


        def data(_: Inputs, __: Estimates, goldens: int) -> dict[str, Any]:
            """Its data, under its id."""
            return {"lengths": Lengths(goldens)}


        def blocks(report: Report) -> list[Block]:
            """One sentence."""
            return [Paragraphs("lengths", "Lengths",
                               [f"{report.sections['lengths'].goldens} goldens compared."])]


        def json(report: Report) -> dict[str, Any]:
            """Its key of the JSON document."""
            return {"lengths": {"goldens": report.sections["lengths"].goldens}}


        SECTION = Section("lengths", blocks, json=json, prepare=prepare, data=data)
        ''').lstrip(), encoding="utf-8")
    edit(root, "annotator/report/sections/__init__.py", "    grades,\n", "    grades,\n    lengths,\n")
    edit(root, "annotator/report/sections/__init__.py", "    dropped.SECTION,\n",
         "    dropped.SECTION,\n    lengths.SECTION,\n")
    assert changed(root) == {"annotator/report/sections/lengths.py",
                             "annotator/report/sections/__init__.py"}
    sample = ROOT / "sample_sessions" / "banking.jsonl"
    out = run(root, f"""
        import json
        from annotator import api
        api.import_goldens("s.db", {str(sample)!r})
        from annotator.cli import cli
        from click.testing import CliRunner
        markdown = CliRunner().invoke(cli, ["report", "s.db", "--format", "markdown",
                                            "--bootstrap", "50"]).output
        document = api.report("s.db", bootstrap=50)
        print(document["lengths"], "16 goldens compared." in markdown)
        """, tmp_path)
    assert out.split() == ["{'goldens':", "16}", "True"]


def test_a_new_leaderboard_section_is_one_file_and_one_line(tmp_path: Path) -> None:
    root = package_copy(tmp_path)
    (root / "annotator/report/board/tally.py").write_text(textwrap.dedent('''
        """How many judges the board holds: a throwaway leaderboard section."""

        from __future__ import annotations

        from typing import TYPE_CHECKING, Any

        from annotator.report.blocks import Block, Paragraphs
        from annotator.report.section import BoardSection

        if TYPE_CHECKING:
            from annotator.report.leaderboard import Leaderboard


        def blocks(board: Leaderboard) -> list[Block]:
            """One sentence."""
            return [Paragraphs("tally", "Tally", [f"{len(board.judges)} judges on the board."])]


        def json(board: Leaderboard) -> dict[str, Any]:
            """Its key of the JSON document."""
            return {"tally": len(board.judges)}


        SECTION = BoardSection("tally", blocks, json)
        ''').lstrip(), encoding="utf-8")
    edit(root, "annotator/report/board/__init__.py", "judges, pairs, probes, unstable",
         "judges, pairs, probes, tally, unstable")
    edit(root, "annotator/report/board/__init__.py", "    pairs.SECTION,\n",
         "    pairs.SECTION,\n    tally.SECTION,\n")
    assert changed(root) == {"annotator/report/board/tally.py",
                             "annotator/report/board/__init__.py"}
    sample = ROOT / "sample_sessions" / "insurance.jsonl"  # labelled by people
    out = run(root, f"""
        from click.testing import CliRunner
        from annotator import api
        from annotator.cli import cli
        api.import_goldens("s.db", {str(sample)!r})
        markdown = CliRunner().invoke(cli, ["judges", "s.db", "--format", "markdown",
                                            "--bootstrap", "50"]).output
        print(api.leaderboard("s.db", bootstrap=50)["tally"], "judges on the board." in markdown)
        """, tmp_path)
    assert out.split() == ["1", "True"]
