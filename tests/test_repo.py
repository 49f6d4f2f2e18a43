"""The repository's own entry points: the README's test command is the one CI runs, and it
installs what the suite needs on a fresh machine."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from tests.conftest import ROOT


def readme_command(marker: str) -> str:
    """The command between a README marker pair (what .ci/run reads)."""
    text = (ROOT / "README.md").read_text()
    block = re.search(rf"<!-- {marker} -->\n```\n(.*?)\n```\n<!-- /{marker} -->", text, re.S)
    assert block, f"README.md has no {marker} block"
    return block.group(1)


def test_the_readme_test_command_is_the_one_ci_runs_and_goes_through_the_script() -> None:
    command = readme_command("test-command")
    assert command.endswith("scripts/test.sh")
    ci = (ROOT / ".ci" / "run").read_text()
    assert "<!-- test-command -->" in ci and 'bash -c "$test_command"' in ci


def test_the_test_script_installs_chromium_when_it_is_missing(tmp_path: Path) -> None:
    # A PATH with no chromium on it, and an apt-get that records what it was asked.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("id", "dirname"):
        found = shutil.which(tool)
        assert found
        (bin_dir / tool).symlink_to(found)
    log = tmp_path / "apt.log"
    (bin_dir / "apt-get").write_text(f'#!/bin/sh\necho "$@" >> {log}\n')
    (bin_dir / "apt-get").chmod(0o755)
    if os.geteuid() != 0:  # the script asks sudo when it is not root
        (bin_dir / "sudo").write_text('#!/bin/sh\nexec "$@"\n')
        (bin_dir / "sudo").chmod(0o755)
    result = subprocess.run(["/bin/bash", str(ROOT / "scripts" / "test.sh"), "--version"],
                            env={"PATH": str(bin_dir), "HOME": str(tmp_path)},
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "Installing Debian's chromium" in result.stderr
    asked = log.read_text().splitlines()
    assert asked[0] == "update -qq" and asked[1].endswith("install -y -qq chromium")
    assert "pytest" in result.stdout + result.stderr  # then it ran the suite's own pytest


def test_the_layer_contracts_hold_and_name_every_module() -> None:
    import sys
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    [layers] = [c for c in config["contracts"] if c["type"] == "layers"]
    layered = {name.strip() for layer in layers["layers"] for name in re.split(r"[:|]", layer)}
    package = ROOT / "annotator"
    top = {f"annotator.{p.stem}" for p in package.glob("*.py") if p.stem != "__init__"}
    top |= {f"annotator.{p.parent.name}" for p in package.glob("*/__init__.py")}
    # A new module must be given a layer, or the contracts would silently not cover it.
    assert top - {"annotator.__main__"} == layered
    # Small modules go in the package they belong to: the top level stays a short list.
    assert len(list(package.glob("*.py"))) <= 20
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]
    assert len(tool["cp-annotator"]["tiers"]) == len(layers["layers"])
    lint = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(lint), "--no-cache"], capture_output=True, text=True, cwd=ROOT,
                            timeout=120)  # no cache: the suite writes nothing into the checkout
    assert result.returncode == 0, result.stdout[-3000:]
    assert "BROKEN" not in result.stdout and result.stdout.count("KEPT") == len(config["contracts"])


def test_the_processes_a_test_starts_see_ctrl_c_even_when_the_suite_ignores_it(
        tmp_path: Path) -> None:
    # The suite as a shell starts it in the background: SIGINT ignored (as `nohup cmd &` and a
    # non-interactive shell's `&` do). A test's own child must still get the default.
    test = tmp_path / "test_child.py"
    test.write_text(
        "import signal, subprocess, sys\n"
        "def test_child():\n"
        "    out = subprocess.run([sys.executable, '-c', 'import signal; "
        "print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)'],\n"
        "                         capture_output=True, text=True).stdout\n"
        "    assert out.strip() == 'True'\n")
    import sys

    (tmp_path / "conftest.py").write_text((ROOT / "tests" / "conftest.py").read_text())
    done = subprocess.run(
        ["/bin/sh", "-c", f"trap '' INT; exec {sys.executable} -m pytest -q -p no:cacheprovider "
                          f"{test}"], capture_output=True, text=True, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:]
