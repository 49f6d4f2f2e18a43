"""Write docs/cli.md, the command-line reference, from the click commands themselves.

    python scripts/cli_reference.py           # regenerate docs/cli.md
    python scripts/cli_reference.py --check   # exit 1 when docs/cli.md is stale (tests run this)

Every command's --help, in the order `annotator --help` lists them, at a fixed width so the
file does not depend on the terminal that made it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from annotator.cli import cli

REFERENCE = Path(__file__).resolve().parent.parent / "docs" / "cli.md"
WIDTH = 100
HEADER = """# Command-line reference

Generated from the commands' own `--help` by `scripts/cli_reference.py`; do not edit by hand
(`tests/test_docs.py` fails when this file and the commands differ). The guides in this folder
say when to use each one; [README](../README.md) has the workflow.
"""


def _context(command: click.Command, parent: click.Context | None, name: str) -> click.Context:
    return click.Context(command, parent=parent, info_name=name, terminal_width=WIDTH,
                         max_content_width=WIDTH, **command.context_settings)


def _sections(command: click.Command, parent: click.Context | None, name: str,
              title: str) -> list[str]:
    """A command's help, then each of its subcommands' (a group such as prompts)."""
    ctx = _context(command, parent, name)
    parts = [f"## {title}\n", "```", command.get_help(ctx), "```\n"]
    if isinstance(command, click.Group):
        for sub in command.list_commands(ctx):
            found = command.get_command(ctx, sub)
            assert found is not None
            parts += _sections(found, ctx, sub, f"{title} {sub}")
    return parts


def render() -> str:
    """The whole reference, as docs/cli.md holds it."""
    assert isinstance(cli, click.Group)
    names = cli.list_commands(_context(cli, None, "annotator"))
    index = ", ".join(f"[`{n}`](#annotator-{n})" for n in names)
    return "\n".join([HEADER, f"Commands, in the order a team meets them: {index}.\n",
                      *_sections(cli, None, "annotator", "annotator")])


def main() -> int:
    """Regenerate the reference, or with --check say whether it is current."""
    text = render()
    if "--check" in sys.argv[1:]:
        if REFERENCE.exists() and REFERENCE.read_text(encoding="utf-8") == text:
            return 0
        print(f"{REFERENCE} is stale: run python scripts/cli_reference.py and commit it.",
              file=sys.stderr)
        return 1
    REFERENCE.write_text(text, encoding="utf-8")
    print(f"Wrote {REFERENCE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
