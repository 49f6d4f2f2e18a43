"""The ``annotator`` command: a click group of thin shells over the core.

Heavy modules (textual, numpy, the session layer) are imported inside the commands, so
``annotator --help`` answers at once.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from annotator.session import Session

EXIT_BAD_INPUT = 2
"""Exit status for input or usage a person must fix (click uses 2 for usage errors too)."""


class _Group(click.Group):
    """A click group that shows AnnotatorError as a sentence and exits 2, never a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        from annotator.errors import AnnotatorError

        try:
            return super().invoke(ctx)
        except AnnotatorError as error:
            click.secho(f"Error: {error}", fg="red", err=True)
            ctx.exit(EXIT_BAD_INPUT)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="cp-annotator")
def cli() -> None:
    """Check an LLM judge's context-precision verdicts against people.

    Import goldens into a session file, annotate them from the keyboard, and compare
    context precision under human and judge labels.
    """


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="annotator")


def _open(path: str, *, create: bool = False) -> Session:
    from annotator.session import Session

    return Session(path, create=create)


# ---------------------------------------------------------------------------------------------


@cli.command("import")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--session", "-s", "session_path", required=True, type=click.Path(dir_okay=False),
              help="The session file to import into (created if missing).")
@click.option("--replace", is_flag=True,
              help="Overwrite goldens, verdicts and labels that differ from the stored ones.")
def import_command(files: tuple[str, ...], session_path: str, replace: bool) -> None:
    """Import goldens from JSONL, JSON or CSV files into a session file.

    Each file goes in as one transaction: a file with an error changes nothing, and the
    error names the file, the line and the field. Importing the same file twice changes
    nothing the second time.

    \b
    Example:
      annotator import goldens.jsonl --session review.db
    """
    from annotator.formats import read_goldens
    from annotator.progress import counter

    with _open(session_path, create=True) as session:
        for path in files:
            with counter(f"Importing {path}", unit="goldens") as advance:
                summary = session.import_goldens(read_goldens(path), path=path, replace=replace,
                                                 progress=advance)
            if summary.changed_nothing:
                click.echo(f"{path}: {summary.goldens_read} goldens, all already in "
                           f"{session_path}; nothing changed.")
            else:
                parts = [f"{summary.goldens_added} goldens added"]
                if summary.goldens_replaced:
                    parts.append(f"{summary.goldens_replaced} replaced")
                parts.append(f"{summary.verdicts_added} judge verdicts")
                parts.append(f"{summary.labels_added} human labels")
                click.echo(f"{path}: {', '.join(parts)} -> {session_path}")


@cli.command("export")
@click.argument("session_path", metavar="SESSION", type=click.Path(exists=True, dir_okay=False))
@click.option("--format", "-f", "fmt", type=click.Choice(["jsonl", "csv"]), default="jsonl",
              show_default=True, help="jsonl: the session JSONL (re-importable); csv: one row "
              "per golden with list columns as JSON.")
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True),
              help="Write here instead of standard output.")
def export_command(session_path: str, fmt: str, output: str | None) -> None:
    """Export every golden with every judge's verdicts and every person's labels.

    The session JSONL round-trips: importing it into a new session and exporting again
    gives the same bytes.

    \b
    Example:
      annotator export review.db --format jsonl --output reviewed.jsonl
    """
    from annotator.formats import write_csv, write_jsonl

    writer = write_csv if fmt == "csv" else write_jsonl
    with _open(session_path) as session:
        records = session.export_records()
        if output is None:
            writer(records, sys.stdout)
            return
        tmp = Path(output + ".partial")
        # newline="" keeps the bytes the same on every platform.
        with tmp.open("w", encoding="utf-8", newline="") as out:
            count = writer(records, out)
        tmp.replace(output)
    click.echo(f"Wrote {count} goldens to {output}.", err=True)


@cli.command("info")
@click.argument("session_path", metavar="SESSION", type=click.Path(exists=True, dir_okay=False))
def info_command(session_path: str) -> None:
    """Summarise a session: goldens, chunks, judges, and each person's progress.

    \b
    Example:
      annotator info review.db
    """
    from rich.console import Console
    from rich.table import Table

    with _open(session_path) as session:
        console = Console()
        chunk_counts = session.chunk_counts()
        console.print(f"[b]{session_path}[/b]: {len(chunk_counts)} goldens, "
                      f"{sum(chunk_counts.values())} chunks")
        judges = Table("judge", "model", "prompt", "chunks judged", title="Judges",
                       title_justify="left")
        for judge in session.judges():
            judges.add_row(judge.name, judge.model or "-", judge.prompt_id,
                           str(len(session.verdicts(judge.name))))
        console.print(judges)
        people = Table("annotator", "chunks decided", "goldens complete", title="Annotators",
                       title_justify="left")
        for annotator in session.annotators():
            decided = session.label_counts(annotator)
            complete = sum(1 for g, n in decided.items() if n == chunk_counts.get(g))
            people.add_row(annotator, str(sum(decided.values())), f"{complete} of "
                           f"{len(chunk_counts)}")
        console.print(people)
