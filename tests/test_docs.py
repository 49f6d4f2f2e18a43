"""The manual: a short README, every link in it and in docs/ resolving, and a CLI reference that
matches the commands."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def anchors(page: Path) -> set[str]:
    """The anchors GitHub makes for a Markdown page's headings (code blocks skipped)."""
    found, fence = set(), False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fence = not fence
        elif not fence and (heading := re.match(r"^#{1,6} (.*)$", line)):
            found.add(re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower()).replace(" ", "-"))
    return found


def test_the_readme_is_a_front_page_and_the_manual_is_in_docs() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200
    for topic in ("annotating", "judging", "prompt-files", "report", "choosing-a-judge",
                  "designs", "serving", "input-formats", "trec", "performance", "development",
                  "cli"):
        assert (ROOT / "docs" / f"{topic}.md").exists(), topic


def test_every_link_in_the_readme_and_docs_resolves() -> None:
    broken = []
    for page in PAGES:
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            if not file.exists():
                broken.append(f"{page.name}: {target} (no such file)")
            elif anchor and file.suffix == ".md" and anchor not in anchors(file):
                broken.append(f"{page.name}: {target} (no such heading)")
    assert not broken, "\n".join(broken)


def test_the_cli_reference_matches_the_commands() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "cli_reference.py"), "--check"],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr


def test_the_code_maps_are_written_from_the_contracts_and_docstrings() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "code_map.py"), "--check"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_the_code_map_check_fails_when_a_docstring_changes(tmp_path: Path) -> None:
    copy = tmp_path / "repo"
    for part in ("annotator", "docs", "scripts"):
        shutil.copytree(ROOT / part, copy / part, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    module = copy / "annotator" / "progress.py"
    module.write_text(module.read_text(encoding="utf-8").replace(
        '"""Rich progress', '"""Progress bars', 1), encoding="utf-8")
    stale = subprocess.run([sys.executable, str(copy / "scripts" / "code_map.py"), "--check"],
                           capture_output=True, text=True, timeout=60)
    assert stale.returncode == 1 and "docs/development.md" in stale.stderr
    subprocess.run([sys.executable, str(copy / "scripts" / "code_map.py")], check=True,
                   capture_output=True, timeout=60)
    assert "| `progress.py` | Progress bars" in (copy / "docs" / "development.md").read_text(
        encoding="utf-8")


def test_the_cli_reference_check_fails_when_an_option_is_added(tmp_path: Path) -> None:
    # The same check, with one more option on `info`: the stale reference must be caught.
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import sys, click, runpy\n"
        "from annotator import cli\n"
        "cli.info_command.params.append(click.Option(['--brand-new'], help='new'))\n"
        f"sys.argv = ['cli_reference.py', '--check']\n"
        f"runpy.run_path({str(ROOT / 'scripts' / 'cli_reference.py')!r}, run_name='__main__')\n")
    done = subprocess.run([sys.executable, str(probe)], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 1 and "is stale" in done.stderr


def workflow_commands() -> list[str]:
    """The README's numbered workflow, one command a line, in the order printed."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## The workflow", 1)[1].split("\n## ", 1)[0]
    return [line.strip() for block in re.findall(r"\n   ```\n(.*?)\n   ```", section, re.S)
            for line in block.splitlines() if line.strip()]


def test_the_readmes_workflow_runs_top_to_bottom_as_printed(tmp_path: Path) -> None:
    import os
    import shlex

    from tests.fake_openai import FakeOpenAI
    from tests.terminal import Terminal

    commands = workflow_commands()
    assert len(commands) >= 9 and commands[0].startswith("annotator import")
    (tmp_path / "sample_sessions").symlink_to(ROOT / "sample_sessions")
    with FakeOpenAI() as server:  # stands in for OpenAI: nothing leaves the machine
        env = {**os.environ, "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": server.base_url}
        for command in commands:
            args = shlex.split(command)
            assert args[0] == "annotator", command
            if args[1] == "annotate":  # a person at the screen: a few decisions, then q
                with Terminal(args[1:], env=env, cwd=tmp_path) as screen:
                    screen.wait_for(rb"alice")
                    for key in "1j1j1j1j1j":
                        screen.press(key)
                    screen.press("q")
                    assert screen.finish() == 0, screen.seen.decode(errors="replace")[-2000:]
                continue
            done = subprocess.run(
                ["bash", "-c", f"{shlex.quote(sys.executable)} -m {command}"], cwd=tmp_path,
                env=env, capture_output=True, text=True, timeout=600)
            assert done.returncode == 0, (command, done.stderr[-1500:])
    assert (tmp_path / "report.html").exists() and (tmp_path / "reviewed.jsonl").exists()
