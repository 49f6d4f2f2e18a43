"""The command line: each command end to end on real files, errors as sentences, fast help."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from annotator.cli import cli
from annotator.store.session import Session
from tests.conftest import ROOT, SAMPLES, banking_file, dump, golden, write_lines
from tests.terminal import Terminal, in_terminal
from tests.waiting import PATIENCE


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_import_export_info(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    code, out, _ = run("import", *map(str, SAMPLES), "--session", db)
    assert code == 0 and out.count("goldens added") == len(SAMPLES)
    code, out, _ = run("import", str(SAMPLES[0]), "--session", db)
    assert code == 0 and "nothing changed" in out
    code, out, _ = run("export", db, "--format", "jsonl")
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]
    assert len(rows) == 46 and rows[0]["id"] == "savings-min-balance"
    target = tmp_path / "out.csv"
    code, _, err = run("export", db, "--format", "csv", "--output", str(target))
    assert code == 0 and "Wrote 46 goldens" in err and target.read_text().startswith("id,")
    code, out, _ = run("info", db)
    assert code == 0 and "46 goldens" in out and "sample-reviewer" in out
    fresh = str(tmp_path / "fresh.db")
    assert run("import", str(SAMPLES[0]), "--session", fresh)[0] == 0  # nobody's labels
    code, out, _ = run("info", fresh)
    assert code == 0 and "Annotators: nobody has labelled a chunk yet" in out
    assert "┃ annotator" not in out  # no empty box


def test_bad_input_is_a_sentence_with_exit_status_2(tmp_path: Path) -> None:
    bad = write_lines(tmp_path / "bad.jsonl", [golden(), golden(id="x", retrieved_contexts=[])])
    code, out, err = run("import", str(bad), "--session", str(tmp_path / "s.db"))
    assert code == 2
    assert err.startswith(f"Error: {bad}, line 2, field 'retrieved_contexts':")
    assert "Traceback" not in out + err


def test_help_is_instant_and_imports_nothing_heavy() -> None:
    code = ("import sys, annotator.cli; "
            "heavy = [m for m in ('textual', 'numpy', 'sqlite_utils', 'openai') if m in sys.modules]; "
            "print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    for args in (["--help"], ["import", "--help"], ["export", "--help"], ["info", "--help"]):
        done = subprocess.run([sys.executable, "-m", "annotator", *args], capture_output=True,
                              text=True, check=True, cwd=ROOT)
        assert "Usage:" in done.stdout


NO_NUMPY = """
import asyncio, sys

class NoNumpy:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "numpy":
            raise ImportError("numpy imported on the annotation screen's path")

sys.meta_path.insert(0, NoNumpy())
from pathlib import Path
from annotator.people.review import Review
from annotator.store.session import Session
from annotator.tui.app import AnnotatorApp

async def main(db):
    with Session(Path(db), create=False) as session:
        app = AnnotatorApp(Review(session, "alice", "sample-judge", count=False), "b.db")
        async with app.run_test(size=(140, 45)) as pilot:
            # Till the totals worker has counted; a crash ends the app, and run_test raises it.
            while app.is_running and not app.screen.review.totals_known:
                await pilot.pause()
            await pilot.press("a", "f", "right_square_bracket", "a")
            print(app.screen.query_one("#summary").content)
    with Session(Path(db), create=False) as session:
        print(len(session.labels("alice")), "labels")

asyncio.run(main(sys.argv[1]))
"""


def test_the_annotation_screen_paints_decides_and_counts_without_numpy(tmp_path: Path) -> None:
    # numpy is a fifth of the screen's start; the first paint and a key need none of it (the
    # summary divides plain counts), so the modules it imports take it from annotator.lazy.
    db = banking_file(tmp_path / "b.db")
    done = subprocess.run([sys.executable, "-c", NO_NUMPY, str(db)], capture_output=True,
                          text=True, cwd=ROOT, timeout=PATIENCE)
    assert done.returncode == 0, done.stderr
    assert "kappa" in done.stdout and "overall" in done.stdout
    assert done.stdout.strip().endswith("3 labels")


def test_the_table_report_and_info_import_no_scipy_matplotlib_textual_or_openai(
        tmp_path: Path) -> None:
    db = banking_file(tmp_path / "b.db")
    code = ("import sys\nfrom annotator.cli import cli\n"
            "try:\n    cli(sys.argv[1:], prog_name='annotator')\nexcept SystemExit:\n    pass\n"
            "heavy = ('scipy', 'matplotlib', 'textual', 'openai', 'anthropic', 'asyncio', 'pandas')\n"
            "print([m for m in heavy if m in sys.modules], file=sys.stderr)")
    for args in (["report", str(db), "--format", "table"], ["info", str(db)],
                 ["report", str(db), "--format", "json"]):
        done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True,
                              text=True, cwd=ROOT, check=True)
        loaded = done.stderr.strip().splitlines()[-1]
        assert loaded == "[]", (args, loaded)
    html = subprocess.run([sys.executable, "-c", code, "report", str(db), "--format", "html"],
                          capture_output=True, text=True, cwd=ROOT, check=True)
    assert "'matplotlib'" in html.stderr.strip().splitlines()[-1]  # the charts need it


def test_the_core_never_imports_textual() -> None:
    import ast

    for path in (ROOT / "annotator").rglob("*.py"):
        if "tui" in path.relative_to(ROOT / "annotator").parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(n.split(".")[0] == "textual" for n in names), path


def test_annotate_refuses_an_unknown_judge_and_asks_which_of_several(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    two_judges = write_lines(tmp_path / "two.jsonl", [golden(judges={"a": [1, 0, 1], "b": [0, 0, 1]})])
    assert run("import", str(two_judges), "--session", db)[0] == 0
    code, text = in_terminal("annotate", db, "--judge", "nope")
    assert code == 2 and "no judge named 'nope' (judges: a, b)" in text
    with Terminal(["annotate", db]) as term:
        term.wait_for(rb"Which judge's verdicts do you want to review\? \(a, b\)")
        term.press("b\r")
        term.wait_for(rb"Accept")
        term.press("a")  # accept the first verdict: 0 is judge b's, 1 would be a's
        term.wait_for(rb"chunks 1/3")
        term.press("q")
        assert term.finish() == 0
    with Session(db) as session:
        assert [label.verdict for label in session.labels(_login()).values()] == [0]
    code, text = in_terminal("annotate", str(tmp_path / "missing.db"))
    assert code == 2 and "There is no session file" in text


def _login() -> str:
    import getpass

    return getpass.getuser()


def test_annotate_on_a_bad_goldens_file_leaves_no_session_behind(tmp_path: Path) -> None:
    bad = write_lines(tmp_path / "goldens.jsonl", [golden(), golden(id="x", user_input=...)])
    code, text = in_terminal("annotate", str(bad))
    assert code == 2 and "line 2, field 'user_input'" in text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["goldens.jsonl"]


def test_annotate_without_a_terminal_says_so_and_stores_nothing(tmp_path: Path) -> None:
    source = write_lines(tmp_path / "goldens.jsonl", [golden()])
    db = banking_file(tmp_path / "b.db")
    before = dump(db)
    for args in (["annotate", str(source)], ["annotate", str(db), "--sample", "3"]):
        done = subprocess.run([sys.executable, "-m", "annotator", *args], capture_output=True,
                              text=True, cwd=ROOT, stdin=subprocess.DEVNULL, timeout=60)
        assert done.returncode == 2, done.stderr
        assert "The annotation screen needs a terminal" in done.stderr
        assert f"annotate {args[1]}' in a terminal" in " ".join(done.stderr.split())
        assert "\x1b" not in done.stdout + done.stderr and "Traceback" not in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.db", "goldens.jsonl"]
    assert dump(db) == before  # no random sample stored


def test_annotate_in_a_pipe_names_commands_that_work_there(tmp_path: Path) -> None:
    source = write_lines(tmp_path / "goldens.jsonl", [golden()])
    (tmp_path / "notes.txt").write_text("not a session", encoding="utf-8")

    def said(*args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "annotator", *args], capture_output=True,
                              text=True, cwd=ROOT, stdin=subprocess.DEVNULL, timeout=60)
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        return " ".join(done.stderr.split())

    # A goldens file not yet imported: import makes the session the readers then open.
    db = tmp_path / "goldens.db"
    assert f"annotator import {source} --session {db}' makes its session" in said(
        "annotate", str(source))
    # Imported: the readers are named on its session file, and they work as printed.
    assert subprocess.run([sys.executable, "-m", "annotator", "import", str(source), "--session",
                           str(db)], capture_output=True, cwd=ROOT).returncode == 0
    hint = said("annotate", str(source))
    assert f"annotator info {db}'" in hint and f"annotator report {db}' work in a pipe" in hint
    info = subprocess.run([sys.executable, "-m", "annotator", "info", str(db)],
                          capture_output=True, text=True, cwd=ROOT)
    assert info.returncode == 0, info.stderr
    # A file that is no session, and a path with nothing there: that is the sentence.
    assert "is not a session file this tool can open" in said("annotate",
                                                                str(tmp_path / "notes.txt"))
    assert "There is no session file at" in said("annotate", str(tmp_path / "typo.db"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["goldens.db", "goldens.jsonl",
                                                          "notes.txt"]


def test_report_with_an_unknown_annotator_is_an_error_listing_the_annotators(tmp_path: Path) -> None:
    db = banking_file(tmp_path / "b.db")
    for fmt in ("table", "csv"):
        result = CliRunner().invoke(cli, ["report", str(db), "--annotator", "nobody",
                                          "--format", fmt, "--bootstrap", "0"])
        assert result.exit_code == 2, result.output
        assert "Nobody called 'nobody' has labelled this session (annotators: " in result.output
        assert "sample-reviewer" in result.output and "Traceback" not in result.output


def test_a_piped_table_is_wide_not_cut_at_80_columns(tmp_path: Path) -> None:
    db = str(banking_file(tmp_path / "b.db"))
    args = ["report", db, "--annotator", "sample-reviewer", "--bootstrap", "0"]
    piped = CliRunner().invoke(cli, args, env={"COLUMNS": ""})
    assert piped.exit_code == 0, piped.output
    widths = [len(line.rstrip()) for line in piped.stdout.splitlines()]
    assert 80 < max(widths) <= 120
    narrow = CliRunner().invoke(cli, args, env={"COLUMNS": "60"})
    assert max(len(line.rstrip()) for line in narrow.stdout.splitlines()) <= 60


def test_a_failed_import_into_a_new_session_creates_nothing(tmp_path: Path) -> None:
    good = write_lines(tmp_path / "good.jsonl", [golden()])
    bad = write_lines(tmp_path / "bad.jsonl", [golden(), golden(id="x", user_input=...)])
    code, _, err = run("import", str(bad), "--session", str(tmp_path / "new.db"))
    assert code == 2 and "line 2, field 'user_input'" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.jsonl", "good.jsonl"]
    # A file that went in before the failing one keeps the new session, with that file in it.
    code, out, _ = run("import", str(good), str(bad), "--session", str(tmp_path / "new.db"))
    assert code == 2 and "1 golden added" in out and (tmp_path / "new.db").exists()


def _open_and_quit(path: Path) -> str:
    """Open the annotation screen on a file in a terminal, wait for it, quit; what it printed."""
    with Terminal(["annotate", str(path), "--annotator", "alice"]) as term:
        term.wait_for(rb"goldens complete")
        term.press("q")
        assert term.finish() == 0
        return term.seen.decode("utf-8", "replace")


def test_an_edited_goldens_file_is_noticed_before_the_screen_opens(tmp_path: Path) -> None:
    from tests.conftest import BANKING

    source = tmp_path / "banking.jsonl"
    source.write_bytes(BANKING.read_bytes())
    assert "Imported 16 goldens" in _open_and_quit(source)
    db = tmp_path / "banking.db"
    assert "Imported" not in _open_and_quit(source)  # unchanged: straight to the screen
    # Saved again with the same content (a new modification time): opens without a question.
    source.write_bytes(source.read_bytes())
    _open_and_quit(source)
    # A chunk edited and a golden appended.
    lines = source.read_text(encoding="utf-8").splitlines()
    second = json.loads(lines[1])
    second["retrieved_contexts"][0] += " (edited)"
    lines[1] = json.dumps(second, ensure_ascii=False)
    lines.append(json.dumps(golden(id="new-golden")))
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    before = dump(db)
    code, text = in_terminal("annotate", str(source), "--annotator", "alice")
    said = " ".join(text.split())
    assert code == 2, text
    me = f"{sys.executable} -m annotator"  # hints name the program as it was run
    assert (f"{source} has changed since it was imported into {db}: 1 golden added "
            f"(new-golden); 1 golden changed ({second['id']}). Bring the changes in with "
            f"'{me} import {source} --session {db} --replace'") in said
    assert f"or open the session as it is with '{me} annotate {db}'" in said
    assert dump(db) == before  # nothing stored
    done = run("import", str(source), "--session", str(db), "--replace")
    assert done[0] == 0 and "1 golden added, 1 replaced" in done[1]
    _open_and_quit(source)  # in: the screen opens again
    # A golden dropped from the file is said, and kept.
    source.write_text("\n".join(lines[1:]) + "\n", encoding="utf-8")
    seen = " ".join(_open_and_quit(source).split())
    assert f"Note: 1 golden of {db} is no longer in {source} (savings-min-balance)" in seen


def test_a_session_from_before_fingerprints_opens_once_compared(tmp_path: Path) -> None:
    from tests.conftest import BANKING

    source = tmp_path / "banking.jsonl"
    source.write_bytes(BANKING.read_bytes())
    assert run("import", str(source), "--session", str(tmp_path / "banking.db"))[0] == 0
    _open_and_quit(source)  # no fingerprint stored by import: compared once, then remembered
    with Session(tmp_path / "banking.db") as session:
        stored = session.source_fingerprint(str(source.resolve()))
    assert stored is not None and stored["size"] == source.stat().st_size


def test_names_that_look_like_markup_are_shown_literally_by_every_command(tmp_path: Path) -> None:
    names = {"judges": {"[/x] judge": [1, 0, 1], "[bold]b": [0, 0, 1]},
             "human_labels": {"[/y]": [1, 0, 1]}}
    source = write_lines(tmp_path / "m.jsonl", [golden(**names)])
    db = str(tmp_path / "m.db")
    assert run("import", str(source), "--session", db)[0] == 0
    for args in (["info", db], ["judges", db, "--bootstrap", "0"],
                 ["report", db, "--judge", "[/x] judge", "--bootstrap", "0"],
                 ["report", db, "--judge", "[bold]b", "--format", "markdown", "--bootstrap", "0"]):
        code, out, err = run(*args)
        assert code == 0, (args, err)
        shown = "\\[/y\\]" if "markdown" in args else "[/y]"  # Markdown escapes brackets
        assert shown in out and "Traceback" not in out + err, args
    assert "[/x] judge" in run("judges", db, "--bootstrap", "0")[1]


def test_io_failures_are_sentences(tmp_path: Path) -> None:
    import os
    import sqlite3

    from annotator.errors import NotSaved

    db = banking_file(tmp_path / "b.db")
    code, _, err = run("report", str(db), "--format", "json", "--bootstrap", "0",
                       "--output", str(tmp_path / "missing" / "r.json"))
    assert code == 2 and "Cannot write" in err and "its folder does not exist" in err
    assert "Traceback" not in err
    fifo = tmp_path / "goldens.jsonl"
    os.mkfifo(fifo)
    code, _, err = run("import", str(fifo), "--session", str(tmp_path / "n.db"))
    assert code == 2 and "not a regular file (a pipe or a device)" in err
    unclosed = tmp_path / "open.csv"
    unclosed.write_text('id,user_input,reference,retrieved_contexts\ng1,q,r,"[""a""]"\n'
                        'g2,"an open quote,r,x\ng3,q3,r,y\n', encoding="utf-8")
    code, _, err = run("import", str(unclosed), "--session", str(tmp_path / "n.db"))
    assert code == 2 and "line 3: a quoted cell that starts on this line is never closed" in err
    assert not (tmp_path / "n.db").exists()
    damaged = tmp_path / "damaged.db"
    data = bytearray(db.read_bytes())
    data[4096:8192] = b"\xff" * 4096  # a page of garbage
    damaged.write_bytes(bytes(data))
    code, _, err = run("report", str(damaged), "--bootstrap", "0")
    assert code == 2 and ("is damaged" in err or "not a session file" in err), err
    assert "Traceback" not in err
    # A damaged page the opening never reads is met mid-command: every page in turn, under
    # the commands that read the whole file, each a sentence naming it.
    pages = db.stat().st_size // 4096
    for page in range(2, pages, max(1, pages // 12)):
        data = bytearray(db.read_bytes())
        data[page * 4096:(page + 1) * 4096] = bytes(range(256)) * 16
        damaged.write_bytes(bytes(data))
        for command in (("report", str(damaged), "--bootstrap", "0"), ("info", str(damaged)),
                        ("export", str(damaged))):
            code, _, err = run(*command)
            assert "Traceback" not in err, (page, command, err)
            assert code == 0 or (code == 2 and str(damaged) in err), (page, command, err)
    with Session(db) as session:  # the storage's refusals, as the screen would meet them
        for raw, says in (("database or disk is full", "is on a full disk"),
                          ("attempt to write a readonly database", "is read-only"),
                          ("disk I/O error", "disk I/O error")):
            error = session._not_saved(sqlite3.OperationalError(raw))
            assert isinstance(error, NotSaved) and says in str(error)
            assert "nothing was saved" in str(error)


def test_a_first_import_killed_midway_is_finished_on_the_next_open(tmp_path: Path) -> None:
    from tests.conftest import BANKING

    for leftover in ("empty", "schema only"):
        folder = tmp_path / leftover.replace(" ", "-")
        folder.mkdir()
        source = folder / "banking.jsonl"
        source.write_bytes(BANKING.read_bytes())
        db = folder / "banking.db"
        if leftover == "empty":
            db.write_bytes(b"")
        else:
            Session(db).close()
        seen = _open_and_quit(source)
        assert "Imported 16 goldens" in seen, leftover
        with Session(db) as session:
            assert session.count_goldens() == 16


def test_a_missing_session_or_a_goldens_file_given_as_one_says_what_to_do(tmp_path: Path) -> None:
    for command in ("info", "report", "judges", "export", "remove-judge"):
        args = [command, str(tmp_path / "nope.db"), *(["x"] if command == "remove-judge" else [])]
        code, _, err = run(*args)
        assert code == 2 and err.startswith(f"Error: There is no session file at "
                                             f"{tmp_path / 'nope.db'}. Create one with "), command
        assert "Usage:" not in err
    source = write_lines(tmp_path / "goldens.jsonl", [golden()])
    code, _, err = run("report", str(source))
    assert code == 2 and f"{source} is a goldens file, not a session. Import it with" in err
    assert f"or open it with 'annotator annotate {source}'" in err
    assert not (tmp_path / "nope.db").exists()


def test_a_name_one_typo_away_is_suggested(tmp_path: Path) -> None:
    db = banking_file(tmp_path / "b.db")
    code, _, err = run("report", str(db), "--judge", "sampel-judge")
    assert code == 2 and "Did you mean 'sample-judge'?" in err
    code, _, err = run("report", str(db), "--annotator", "sample-reveiwer")
    assert code == 2 and "Did you mean 'sample-reviewer'?" in err
    code, _, err = run("report", str(db), "--judge", "zzz")
    assert code == 2 and "Did you mean" not in err


def test_hints_name_the_program_as_it_was_run(tmp_path: Path) -> None:
    script = Path(sys.executable).parent / "annotator"
    missing = str(tmp_path / "none.db")
    bare = {**os.environ, "PATH": "/usr/bin:/bin"}  # the venv not activated
    told = subprocess.run([str(script), "info", missing], capture_output=True, text=True,
                          env=bare, timeout=PATIENCE)
    assert told.returncode == 2 and f"'{script} import GOLDENS.jsonl" in told.stderr, told.stderr
    on_path = {**os.environ, "PATH": f"{script.parent}:/usr/bin:/bin"}
    told = subprocess.run(["annotator", "info", missing], capture_output=True, text=True,
                          env=on_path, timeout=PATIENCE)
    assert "'annotator import GOLDENS.jsonl" in told.stderr, told.stderr


def test_help_lists_commands_in_workflow_order() -> None:
    out = CliRunner().invoke(cli, ["--help"]).output
    listed = [line.split()[0] for line in out.split("Commands:")[1].splitlines() if line.strip()]
    assert listed[:6] == ["import", "judge", "annotate", "report", "judges", "export"]
    assert sorted(listed) == sorted(cli.commands)


def test_empty_qrels_are_refused_and_a_csv_file_is_announced(tmp_path: Path) -> None:
    db = banking_file(tmp_path / "b.db")
    out = tmp_path / "gold.qrels"
    code, _, err = run("export", str(db), "--format", "qrels", "--truth", "gold", "--output",
                       str(out))
    assert code == 2 and "has gold labels" in err and "nothing was written" in err, err
    assert "--adjudicate" in err and not out.exists()
    code, _, err = run("report", str(db), "--format", "csv", "--output", str(tmp_path / "c.csv"))
    assert code == 0 and f"Wrote 80 chunk rows of judge 'sample-judge' to {tmp_path}" in err, err


def test_a_judge_whose_order_makes_cp_worse_is_not_a_negative_share_of_the_way(
        tmp_path: Path) -> None:
    # People find the first and third chunks useful; the judge moves the second to the top.
    rows = [golden(id=f"g{i}", retrieved_contexts=["x", "y", "z"], judge="j",
                   judge_verdicts=[{"verdict": v} for v in (0, 1, 0)],
                   human_labels={"ann": [1, 0, 1]}) for i in range(4)]
    db = str(tmp_path / "s.db")
    assert run("import", str(write_lines(tmp_path / "g.jsonl", rows)), "--session", db)[0] == 0
    code, out, _ = run("report", db, "--bootstrap", "0", "--format", "markdown")
    said = " ".join(out.split())
    assert code == 0 and "its order makes CP worse than the retriever's" in said
    assert "% of the way" not in said


def test_a_hint_names_the_session_that_was_opened_and_works_as_printed(tmp_path: Path) -> None:
    import re
    import shlex

    db = banking_file(tmp_path / "my session.db")  # a space: the hint must quote it
    runner = CliRunner()
    refused = runner.invoke(cli, ["judges", str(db), "--split", "test"])
    assert refused.exit_code == 2
    [hint] = re.findall(r"'(annotator split [^']*)'", " ".join(refused.stderr.split()))
    assert "SESSION" not in hint and f'"{db}"' in hint
    args = shlex.split(hint)[1:]
    assert runner.invoke(cli, args).exit_code == 0  # the advice, as printed
    assert runner.invoke(cli, ["judges", str(db), "--split", "test"]).exit_code == 0


def test_a_name_nobody_has_labelled_under_says_how_to_label(tmp_path: Path) -> None:
    db = banking_file(tmp_path / "b.db", people=())
    done = CliRunner().invoke(cli, ["report", str(db), "--annotator", "alcie"])
    assert done.exit_code == 2
    assert ("nobody has labelled it yet. Label some goldens first with 'annotator annotate "
            f"{db} --annotator alcie'") in " ".join(done.stderr.split())


def test_a_table_report_in_a_pipe_has_no_padding_blanks_and_no_escapes(tmp_path: Path) -> None:
    db = banking_file(tmp_path / "b.db")
    for command in ("report", "judges"):
        done = subprocess.run([sys.executable, "-m", "annotator", command, str(db)],
                              capture_output=True, text=True, cwd=ROOT, check=True)
        lines = done.stdout.splitlines()
        assert len(lines) > 10 and lines[0] == "Headline"
        assert [line for line in lines if line != line.rstrip()] == []
        assert "\x1b" not in done.stdout


def test_ctrl_c_in_import_says_what_was_kept_and_what_was_not(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from collections.abc import Iterator

    from annotator.formats import read_goldens as read
    from annotator.models import GoldenRecord

    db = tmp_path / "s.db"
    second = write_lines(tmp_path / "second.jsonl", [golden(id="late"), golden(id="later")])

    def interrupted(path: str | Path, **kwargs: object) -> Iterator[GoldenRecord]:
        for number, record in enumerate(read(path, **kwargs), 1):  # type: ignore[arg-type]
            if Path(path) == second and number == 2:
                raise KeyboardInterrupt  # Ctrl-C half-way through the second file
            yield record

    # Where every import reads its files (annotator.intake.Intake).
    monkeypatch.setattr("annotator.intake.read_goldens", interrupted)
    result = CliRunner().invoke(cli, ["import", str(SAMPLES[0]), str(second), "--session",
                                      str(db)])
    assert result.exit_code == 130, result.output
    assert "Aborted" not in result.output and "Traceback" not in result.output
    assert f"Stopped. {SAMPLES[0]} is in {db}; nothing of {second} was kept" in result.stderr
    with Session(db) as session:
        assert session.count_goldens() == 16 and "late" not in session.golden_ids()
