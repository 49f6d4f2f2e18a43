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
    edit(root, "annotator/store/versions.py", '"m015_epochs")', '"m015_epochs", "m099_unreadable")')
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
        from annotator.review import Review
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
    assert "tests/test_extending.py" in text
