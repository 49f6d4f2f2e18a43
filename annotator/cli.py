"""The ``annotator`` command: a click group of thin shells over the core.

Heavy modules (textual, numpy, the session layer) are imported inside the commands, so
``annotator --help`` answers at once.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from annotator.importers import SOURCES
from annotator.judge.providers import PROVIDERS
from annotator.judge.styles import PROMPTS
from annotator.models import CHECKS_MIN, DEFAULT_CHECK_RATE, DESIGNS
from annotator.place import is_url, shown
from annotator.report.columns import MATRIX_UP_TO, SORT_KEYS
from annotator.report.output import FORMATS
from annotator.stats.alt_test import ALPHA as ALT_ALPHA
from annotator.stats.alt_test import EPSILON
from annotator.text import counted, visible

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from annotator.calibration.recheck import Recheck
    from annotator.intake import Imported
    from annotator.judge.batch import Limits
    from annotator.judge.runner import RunOptions, RunStats, Task
    from annotator.judge.types import JudgePrompt, JudgeSettings
    from annotator.models import Price
    from annotator.people.assignment import Quota
    from annotator.report.output import Document
    from annotator.scoring.checks import Check
    from annotator.store.session import Session

EXIT_BAD_INPUT = 2
"""Exit status for input or usage a person must fix (click uses 2 for usage errors too)."""


WORKFLOW = ("import", "judge", "annotate", "report", "judges", "export", "info", "serve",
            "guidelines", "split", "sample", "plan", "trust", "recheck", "probe", "prompts",
            "batches", "import-results", "merge", "copy", "remove-judge")
"""The commands in the order a team meets them ('annotator --help' lists them so)."""


class _Group(click.Group):
    """A click group that shows AnnotatorError as a sentence and exits 2, never a traceback,
    and lists its commands in workflow order."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """WORKFLOW first, then any command it does not name."""
        names = super().list_commands(ctx)
        return sorted(names, key=lambda n: WORKFLOW.index(n) if n in WORKFLOW else len(WORKFLOW))

    def invoke(self, ctx: click.Context) -> Any:
        from annotator.errors import AnnotatorError

        _OPENED.clear()  # one command's files (a test runs many in one process)
        try:
            return super().invoke(ctx)
        except AnnotatorError as error:
            from annotator.redact import scrub

            click.secho(as_invoked(f"Error: {visible(scrub(str(error)))}"), fg="red", err=True)
            ctx.exit(EXIT_BAD_INPUT)
        except Exception as error:
            store = sys.modules.get("annotator.store.session")  # loaded once a session was opened
            sentence = store.damaged(error) if store is not None else None
            if sentence is None:
                raise
            click.secho(f"Error: {visible(sentence)}", fg="red", err=True)
            ctx.exit(EXIT_BAD_INPUT)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="cp-annotator")
def cli() -> None:
    """Check an LLM judge's context-precision verdicts against people.

    Import goldens into a session file, annotate them from the keyboard, and compare
    context precision under human and judge labels.
    """


def _say(text: str, *, err: bool = False) -> None:
    """Print a line for a person: text from files and servers in it is shown, never obeyed by
    the terminal (annotator.text.visible); a hint naming a command names it as this run was
    invoked. A secret in it is hidden (annotator.redact)."""
    from annotator.redact import scrub

    click.echo(as_invoked(visible(scrub(text))), err=err)


def _me() -> str:
    """This program as it was invoked, for hints a person can paste: 'annotator' when that is
    on PATH, else the path typed (.venv/bin/annotator), or 'python -m annotator'."""
    import os
    import shutil

    argv0 = sys.argv[0] if sys.argv else ""
    if argv0.endswith(os.path.join("annotator", "__main__.py")):
        return f"{sys.executable} -m annotator"
    if os.path.basename(argv0) != "annotator":  # not run as the command (a test's runner)
        return "annotator"
    found = shutil.which("annotator")
    if found and os.path.realpath(found) == os.path.realpath(argv0):
        return "annotator"
    return argv0


_OPENED: list[str] = []
"""The session files this command opened, as typed (see as_invoked)."""


def as_invoked(text: str) -> str:
    """``text`` with each 'annotator COMMAND' hint as a person can paste it: the program named
    as this run invoked it, and a SESSION placeholder (the core does not know how the file was
    typed) replaced by the session file this command opened."""
    import re

    if "annotator " not in text:
        return text
    if len(set(_OPENED)) == 1:
        session = _hint_word(_OPENED[0])
        text = re.sub(r"'annotator [^']*'",
                      lambda hint: re.sub(r"\bSESSION\b", lambda _: session, hint.group(0)),
                      text)
    me = _me()
    if me == "annotator":
        return text
    names = "|".join(sorted(map(re.escape, cli.commands), key=len, reverse=True))
    return re.sub(rf"\bannotator (?=(?:{names})\b)", lambda _: me + " ", text)


def _hint_word(path: str) -> str:
    """A path as a hint can hold it: hints sit in single quotes, so a path that needs quoting
    gets double ones."""
    import re
    import shlex

    path = shown(path)  # a URL's login never printed
    if shlex.quote(path) == path:
        return path
    return '"' + re.sub(r'(["\\$`])', r"\\\1", path) + '"'


def _stops_on_signals(command: Callable[..., None]) -> Callable[..., None]:
    """A long command that SIGTERM and SIGHUP (a service manager, a closed terminal) stop as
    Ctrl-C does: what it stored stays, what it had begun is undone or cleared, and it says so;
    the default would end it at once, leaving a judge or an align's candidates half made."""
    import functools

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> None:
        import signal

        def stop(signum: int, frame: object) -> None:
            raise KeyboardInterrupt

        previous = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGHUP)}
        try:
            command(*args, **kwargs)
        finally:
            for number, handler in previous.items():
                signal.signal(number, handler)

    return run


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="annotator")


def _upgrading(path: str) -> None:
    _say(f"Upgrading {path} to this release's session schema (once; a large file takes a few "
         "seconds)...", err=True)


def _epoch_option(command: Callable[..., None]) -> Callable[..., None]:
    """--epoch: read a judge's verdicts of another epoch than its latest (repeatable)."""
    return click.option(
        "--epoch", "epochs", multiple=True, metavar="[JUDGE=]EPOCH",
        help="Read a judge's verdicts of this epoch instead of its latest (its first 4 "
             "characters or more; 'annotator judges --format json' lists each judge's epochs). "
             "Verdicts of two epochs are never pooled.")(command)


class _SessionPlace(click.ParamType):  # type: ignore[type-arg]
    """A session's place: a file's path, or a PostgreSQL URL (taken as it is)."""

    name = "session"

    def __init__(self, *, exists: bool = False) -> None:
        self.file = click.Path(exists=exists, dir_okay=False)

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        """A URL as typed; a path checked as click.Path checks it."""

        return value if is_url(value) else self.file.convert(value, param, ctx)


SESSION = _SessionPlace()
SESSION_EXISTS = _SessionPlace(exists=True)


def _open(path: str, *, create: bool = False, reads_only: bool = False) -> Session:
    from annotator.store.session import Session

    _OPENED.append(shown(path))  # before opening: a refusal's hint may name it too
    Session.upgrading = _upgrading
    return Session(path, create=create, reads_only=reads_only)


# ---------------------------------------------------------------------------------------------


@cli.command("import")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--session", "-s", "session_path", required=True, type=SESSION,
              help="The session file to import into (created if missing).")
@click.option("--replace", is_flag=True,
              help="Overwrite goldens, verdicts and labels that differ from the stored ones.")
@click.option("--delimiter", default=",", show_default=True,
              help="The cell separator of CSV files (e.g. ';' for a spreadsheet that writes "
              "semicolons, '\\t' for tabs).")
@click.option("--map", "mapping", multiple=True, metavar="FIELD=PATH",
              help="Where a golden field is in a file of another shape (repeat it): a column or "
              "a dotted path, [] for each item of a list, e.g. user_input=inputs.question "
              "retrieved_contexts=outputs.documents[].page_content, or metadata.NAME=PATH.")
@click.option("--from", "source", type=click.Choice(list(SOURCES)), default="ragas",
              show_default=True,
              help="Whose export the files are: RAGAS-shaped goldens (JSONL, JSON, CSV, "
              "parquet; hf: a Hugging Face dataset's), OpenInference / Phoenix spans (OTLP JSON "
              "or the spans dataframe), MLflow 3 traces (Trace.to_json(), search_traces()) or "
              "Langfuse observations; a tracer's export is detected too.")
@click.option("--retriever", metavar="NAME",
              help="In a tracer's export, the name of the spans (observations) that retrieved "
              "the chunks, where they are not marked as retrievers.")
@_stops_on_signals
def import_command(files: tuple[str, ...], session_path: str, replace: bool,
                   delimiter: str, mapping: tuple[str, ...], source: str,
                   retriever: str | None) -> None:
    """Import goldens from JSONL, JSON or CSV files into a session file.

    Each file goes in as one transaction: a file with an error changes nothing, and the
    error names the file, the line and the field. Importing the same file twice changes
    nothing the second time.

    \b
    Examples:
      annotator import goldens.jsonl --session review.db
      annotator import phoenix-spans.json --session review.db --from openinference
      annotator import observations.json --session review.db --retriever vector-search
      annotator import langsmith.jsonl --session review.db --map user_input=inputs.question \\
        --map retrieved_contexts=outputs.documents[].page_content \\
        --map retrieved_context_ids=outputs.documents[].metadata.id \\
        --map reference=reference_outputs.answer
    """
    from annotator.formats import ColumnMap
    from annotator.intake import Intake
    from annotator.progress import counter

    try:
        column_map = ColumnMap.parse(mapping) if mapping else None
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--map") from None
    intake = Intake(files, delimiter=_delimiter(delimiter), mapping=column_map, source=source,
                    retriever=retriever, replace=replace)
    for companion in intake.companions:
        _say(f"Note: {companion} holds Langfuse dataset items: their expected outputs are read "
             "as the references of the traces they name.", err=True)
    imported: list[str] = []
    try:
        for done in intake.into(session_path, then=_warn_alike, progress=lambda path: counter(
                f"Importing {path}", unit="goldens")):
            imported.append(done.path)
            _say_imported(done, session_path)
    except KeyboardInterrupt:
        # Each file is one transaction: the one in progress left nothing; those before stay.
        kept = (f"{', '.join(imported)} {'is' if len(imported) == 1 else 'are'} in "
                f"{session_path}; " if imported else "")
        left = [f for f in intake.files if f not in imported]
        _say(f"Stopped. {kept}nothing of {left[0]} was kept"
             + (f" (nor of the {len(left) - 1} files after it)" if len(left) > 1 else "")
             + ". Run the same command again to import the rest: files already in change "
             "nothing.", err=True)
        raise SystemExit(130) from None


def _say_imported(done: Imported, session_path: str) -> None:
    """What importing one file did, once it is stored: its notes, then its counts."""
    for notice in done.notices:
        _say(f"Note: {notice}", err=True)
    summary = done.summary
    if summary.changed_nothing:
        _say(f"{done.path}: {counted(summary.goldens_read, 'golden')}, all already in "
             f"{session_path}; nothing changed.")
        return
    parts = [f"{counted(summary.goldens_added, 'golden')} added"]
    if summary.goldens_replaced:
        parts.append(f"{summary.goldens_replaced:,} replaced")
    parts.append(counted(summary.verdicts_added, "judge verdict"))
    parts.append(counted(summary.labels_added, "human label"))
    _say(f"{done.path}: {', '.join(parts)} -> {session_path}")


def _delimiter(given: str) -> str:
    """--delimiter as the one character csv wants ('\\t' and 'tab' mean a tab)."""
    separator = "\t" if given in ("\\t", "tab") else given
    if len(separator) != 1:
        raise click.BadParameter(f"'{given}' is not one character; use ',', ';', '\\t' or '|'",
                                 param_hint="--delimiter")
    return separator


def _warn_alike(session: Session) -> None:
    """Warn about annotator names that differ only by case or spacing: two people to the report."""
    from annotator.resolve import alike

    for group in alike(session.annotators()):
        names = " and ".join(f"'{name}'" for name in group)
        _say(f"Warning: the annotators {names} differ only by case or spacing; the report "
             "counts them as different people. If they are one person, fix the name in the "
             "file and import it again with --replace.", err=True)


@cli.command("import-trec")
@click.argument("session_path", metavar="SESSION")
@click.option("--queries", required=True, type=click.Path(dir_okay=False),
              help="The topics: TSV 'qid<TAB>text', or BEIR JSON lines {_id, text}.")
@click.option("--run", type=click.Path(dir_okay=False),
              help="A TREC run (qid Q0 docid rank score tag): each query's ranked chunks.")
@click.option("--pool", type=click.Path(dir_okay=False),
              help="An unranked pool ('qid 0 docid' lines, or a qrels file): no order, so no "
                   "CP or rank statistics.")
@click.option("--corpus", type=click.Path(dir_okay=False),
              help="The documents' texts: BEIR corpus.jsonl or TSV 'docid<TAB>text' (without "
                   "it, a chunk shows its id).")
@click.option("--labels", "labels", multiple=True, metavar="NAME=QRELS",
              help="A person's (or assessors') graded qrels, as NAME's labels. Repeatable.")
@click.option("--judge", "judges", multiple=True, metavar="NAME=QRELS",
              help="A judge's graded qrels, as judge NAME's verdicts. Repeatable.")
@click.option("--scale", "scale_text", metavar="0-N",
              help="The grade scale (default: 0 to the highest grade in the qrels).")
@click.option("--relevant-from", type=int,
              help="The lowest grade that counts as relevant (default: 2 on 0-3, else half-way "
                   "up); stored with the session.")
@click.option("--replace", is_flag=True,
              help="Overwrite goldens, verdicts or labels that differ from the session's.")
@_stops_on_signals
def import_trec_command(session_path: str, queries: str, run: str | None, pool: str | None,
                        corpus: str | None, labels: tuple[str, ...], judges: tuple[str, ...],
                        scale_text: str | None, relevant_from: int | None,
                        replace: bool) -> None:
    """Import an IR collection: queries become goldens, a run's ranking or a pool their
    chunks, qrels a person's graded labels or a judge's graded verdicts.

    Document ids are kept: every qrels and run export names them again. No reference answer
    is needed: relevance is to the query, as TREC defines it. A file with an error changes
    nothing and the error names the file, the line and the value.

    \b
    Examples:
      annotator import-trec dl23.db --queries queries.tsv --pool qrels.txt \\
        --labels nist=qrels.txt --judge gpt-4o=gpt4o.qrels --judge llama=llama.qrels
      annotator import-trec bm25.db --queries topics.tsv --run bm25.run --corpus corpus.jsonl
    """
    from annotator.intake.trec import read_collection_files, store_collection
    from annotator.models import default_threshold
    from annotator.progress import counter
    from annotator.store.session import Session

    _OPENED.append(session_path)  # a refusal's hint may name it
    Session.upgrading = _upgrading
    with counter(f"Reading {corpus or queries}", unit="lines") as lines_read:
        read = read_collection_files(session_path, queries, run=run, pool=pool, corpus=corpus,
                                     labels=labels, judges=judges, scale=scale_text,
                                     relevant_from=relevant_from, reading=lines_read)
    with counter(f"Importing {queries}", unit="queries") as advance:
        done = store_collection(session_path, read, replace=replace, importing=advance)
    for sentence in done.notes:
        _say(f"Note: {sentence}", err=True)
    summary, scale = done.summary, done.scale
    texts = "" if corpus is not None else " (no --corpus: each chunk shows its document id)"
    _say(f"{queries}: {counted(summary.goldens_added, 'query', 'queries')} with "
         f"{'ranked' if done.ranked else 'unranked'} documents{texts}, "
         f"{counted(summary.verdicts_added, 'judge verdict')}, "
         f"{counted(summary.labels_added, 'human label')} -> {session_path}")
    if done.graded:
        default = " (the default)" if scale.relevant_from == default_threshold(scale.top) else ""
        _say(f"Grades 0 to {scale.top}; relevant from {scale.relevant_from}{default} for CP "
             "and every binary statistic ('report --relevant-from N' reads another).")
    if not done.ranked:
        _say("An unranked pool: the report and the leaderboard leave out CP and every "
             "statistic that needs an order.")


@cli.command("export")
@click.argument("session_path", metavar="SESSION", type=SESSION)
@click.option("--format", "-f", "fmt",
              type=click.Choice(["jsonl", "csv", "calibration", "ragas-annotation", "qrels",
                                 "run", "mlflow-feedback", "phoenix-annotations",
                                 "langfuse-scores", "feedback"]),
              default="jsonl", show_default=True,
              help="jsonl: the session JSONL (re-importable); csv: one row per golden with list "
              "columns as JSON; calibration: JSONL with the truth, every judge and the split; "
              "ragas-annotation: RAGAS's MetricAnnotation JSON for its prompt optimisers; "
              "qrels / run: TREC files for trec_eval and ir_measures (a golden is a query, its "
              "chunks the documents); mlflow-feedback / phoenix-annotations / langfuse-scores: "
              "people's labels on traced goldens, as each tracer takes them back; feedback: "
              "the dev split's chunks where the judge and people differ, direction-aware, as "
              "JSON lines for prompt optimizers (DSPy/GEPA, MLflow MemAlign).")
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True),
              help="Write here instead of standard output.")
@click.option("--annotator", "-a", help="calibration / ragas-annotation / feedback: whose "
              "labels are the truth (default: gold labels, else what everyone agrees on, or the "
              "only person).")
@click.option("--judge", "-j", help="ragas-annotation, feedback: whose verdicts (default: the "
              "only judge); "
              "the write-back formats: the name people's feedback goes by (default: the only "
              "judge's, so a tracer pairs it with that judge's assessments).")
@click.option("--against", type=click.Choice(["reference", "response"]), default="reference",
              show_default=True, help="ragas-annotation: RAGAS's with-reference or "
              "without-reference metric.")
@click.option("--truth", default="human", show_default=True,
              help="qrels: whose relevance: 'human' (the truth as for calibration, or "
              "--annotator's labels), 'gold' (adjudicated labels only), or a judge's name.")
@click.option("--group-by", help="run: the metadata key naming each golden's system (the run "
              "tag; default: retriever, when the goldens carry it).")
@click.option("--system", help="run: only this system's goldens (one run per system).")
@_epoch_option
def export_command(session_path: str, fmt: str, output: str | None, annotator: str | None,
                   judge: str | None, against: str, truth: str, group_by: str | None,
                   system: str | None, epochs: tuple[str, ...]) -> None:
    """Export every golden with every judge's verdicts and every person's labels.

    The session JSONL round-trips: importing it into a new session and exporting again
    gives the same bytes. The calibration set and the RAGAS annotation file carry the
    truth: gold labels where adjudicated, else the label everyone agrees on.

    \b
    Examples:
      annotator export review.db --format jsonl --output reviewed.jsonl
      annotator export team.db --format calibration --output calibration.jsonl
      annotator export team.db --format ragas-annotation --output annotated.json
      annotator export team.db --format qrels --output qrels.txt
      annotator export team.db --format run --system bm25 --output bm25.run
      annotator export traced.db --format mlflow-feedback --output feedback.jsonl
      annotator export team.db --format feedback --judge gpt-4o-mini-builtin -o dev.jsonl
    """
    from annotator.formats import write_csv, write_jsonl
    from annotator.report.epochs import epochs_given

    with _open(session_path, reads_only=True) as session, epochs_given(session, epochs):
        if fmt in ("qrels", "run"):
            count = _write_trec(session, fmt, output, truth, annotator, group_by, system)
        elif fmt == "calibration":
            from annotator.exports import write_calibration

            count, marked = _write_output(output,
                                          lambda out: write_calibration(session, out, annotator))
            if marked:
                _say(f"{counted(marked, 'judge verdict')} carry reason_marked_wrong: people "
                     "marked the reason wrong, so leave them out of any demonstrations.",
                     err=True)
        elif fmt in ("mlflow-feedback", "phoenix-annotations", "langfuse-scores"):
            from annotator.exports import writeback

            judged = list(session.judges_judged())
            named = judge or (judged[0] if len(judged) == 1 else writeback.DEFAULT_NAME)
            count = _write_output(output, lambda out: writeback.write(
                fmt, session, out, annotator, named))
        elif fmt == "feedback":
            count = _write_output(output, lambda out: _write_feedback(session, out, judge,
                                                                      annotator, against))
        elif fmt == "ragas-annotation":
            from annotator.exports import ragas_annotation
            from annotator.jsonout import write_json
            from annotator.report.build import choose_judge

            data, left_out = ragas_annotation(session, choose_judge(session, judge), annotator,
                                              against)
            count = sum(len(samples) for samples in data.values())
            _write_output(output, lambda out: write_json(data, out))
            if left_out:
                _say(f"Left out {counted(left_out, 'chunk')} whose reason people marked wrong: "
                     "as a demonstration its reasoning would teach the wrong thing.", err=True)
        else:
            if fmt == "csv":
                count = _write_output(output, lambda out: write_csv(session.export_records(), out))
            else:
                count = _write_output(output, lambda out: write_jsonl(
                    session.export_records(), out, session.export_checks()))
        from annotator.report.epochs import epochs_of, span_sentence

        for name in session.judges_judged():
            if (span := span_sentence(epochs_of(session, name))) is not None:
                _say(f"Note: {span}", err=True)
    if output is not None:
        what = ("chunk sample" if fmt == "ragas-annotation" else "line" if fmt in ("qrels", "run")
                else "disagreement" if fmt == "feedback"
                else "label" if fmt.endswith(("feedback", "annotations", "scores"))
                else "golden")
        _say(f"Wrote {counted(count, what)} to {output}.", err=True)


def _write_feedback(session: Session, out: Any, judge: str | None, annotator: str | None,
                    against: str) -> int:
    """--format feedback: the dev split's disagreements of a judge with the truth."""
    import contextlib

    from annotator.calibration import feedback
    from annotator.errors import SessionError
    from annotator.judge.runner import stored_settings
    from annotator.report.build import choose_judge

    name = choose_judge(session, judge)
    splits = session.splits()
    if not splits:
        raise SessionError(
            "The feedback export holds the dev split only, so an optimizer never sees the "
            f"goldens a tuned prompt is tested on; make a split first: 'annotator split "
            f"{session.where} --dev 0.5 --seed 1'.")
    defined = next(j for j in session.judges() if j.name == name)
    with contextlib.suppress(SessionError):  # an imported judge: --against says
        against = stored_settings(defined).prompt.against  # what the judge itself saw
    dev = [g for g in session.golden_ids() if splits.get(g) == "dev"]
    return feedback.write(feedback.disagreements(session, name, dev, against, annotator), out)


def _write_trec(session: Session, fmt: str, output: str | None, truth: str,
                annotator: str | None, group_by: str | None, system: str | None) -> int:
    """--format qrels or run (annotator/trec.py)."""
    from annotator.columns import MISSING
    from annotator.exports import trec

    frame = session.chunk_frame()
    if fmt == "run":
        written: int = _write_output(output, lambda out: trec.write_run(session, frame, out,
                                                                        group_by, system))
        return written
    verdict = trec.relevance(session, frame, truth, annotator)
    if not (verdict != MISSING).any():  # before any file is made: an empty qrels scores nothing
        from annotator.errors import AnnotatorError

        whose = {"human": "people's labels" + (f" ({annotator})" if annotator else ""),
                 "gold": "gold labels (adjudicate disagreements with 'annotator annotate "
                 "--adjudicate' first, or use --truth human)"}.get(truth, f"{truth}'s verdicts")
        raise AnnotatorError(f"No chunk of {session.where} has {whose}: the qrels would be "
                             "empty, so nothing was written.")
    lines: int = _write_output(output, lambda out: trec.write_qrels(session, frame, verdict,
                                                                          out))
    return lines



def _login_name() -> str:
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no login name in some containers
        return "annotator"


def _check_options(command: Callable[..., None]) -> Callable[..., None]:
    """The attention-check options of every command that opens the annotation screen."""
    options = [
        click.option("--checks", "check_rate", type=click.FloatRange(0, 1), default=0.0,
                     help="Interleave attention checks at this rate (a share of the goldens "
                     "shown): goldens whose truth is settled, shown like any other; answers on "
                     "them are kept apart and never count as labels."),
        click.option("--checks-from", type=click.Path(exists=True, dir_okay=False),
                     help="A gold goldens file (JSONL/JSON/CSV) whose human_labels are the "
                     "truth, as more attention checks beside the session's adjudicated gold "
                     "labels."),
        click.option("--checks-min", type=click.FloatRange(0, 1), default=CHECKS_MIN,
                     show_default=True,
                     help="The statistics screen warns of a person right on fewer checks than "
                     "this."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def _team_options(command: Callable[..., None]) -> Callable[..., None]:
    """How a team shares the goldens, for every command that opens the annotation screen."""
    from annotator.people.assignment import LEASE_MINUTES

    options = [
        click.option("--per-golden", type=click.IntRange(1),
                     help="Offer each golden to at most this many people: each person takes "
                     "the golden on their screen, and one that K others hold or completed is "
                     "passed over. Exact however many screens and processes share the file."),
        click.option("--lease-minutes", type=click.FloatRange(0, min_open=True),
                     default=LEASE_MINUTES, show_default=True,
                     help="With --per-golden: how long a golden stays taken by a screen that "
                     "stopped without closing (a killed process, a lost laptop) before it "
                     "returns to the pool; an open screen keeps its golden."),
        click.option("--gate", type=click.IntRange(1), metavar="N",
                     help="A qualification gate, kept in the session: each newcomer first "
                     "answers N attention-check chunks, and their labels count toward the "
                     "truth only once they are right on --checks-min of them (people who "
                     "labelled before the gate are exempt)."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def _set_gate(session: Session, gate: int | None, checks_min: float,
              checks_from: str | None) -> None:
    """Keep the qualification gate in the session, once its checks can fill it."""
    if gate is not None:
        from annotator.scoring.gate import keep_gate

        keep_gate(session, gate, checks_min, Path(checks_from) if checks_from else None)


def _quota(session: Session, per_golden: int | None, lease_minutes: float) -> Quota | None:
    """The quota asked for, with what people completed before it counted in (once)."""
    from annotator.people.assignment import Quota

    if per_golden is None:
        return None
    session.claim_completed()
    return Quota(per_golden, lease_minutes * 60)


@cli.command("annotate")
@click.argument("session_path", metavar="SESSION", type=SESSION)
@click.option("--annotator", "-a", default=_login_name, show_default="your login name",
              help="Whose labels these are; several people can share one session file.")
@click.option("--judge", "-j", help="Whose verdicts to review (default: the only judge, or ask).")
@click.option("--pass-mark", type=click.FloatRange(0, 1), default=0.7, show_default=True,
              help="The context precision a golden must reach.")
@click.option("--blind-rate", type=click.FloatRange(0, 1), default=0.0, show_default=True,
              help="Share of chunks labelled blind (judge hidden until you answer), drawn "
              "reproducibly per session and annotator; measures anchoring.")
@click.option("--sample", "sample_size", type=click.IntRange(1),
              help="Label only a sample of N goldens (drawn once per session by --design from "
              "--seed, and kept): the report then gives a bias-corrected mean CP from it.")
@click.option("--design", type=click.Choice(DESIGNS), default="uniform", show_default=True,
              help="How --sample draws: at random, by strata of the judge's CP, or more often "
              "where the judge is expected to err (see 'annotator plan').")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of --sample.")
@click.option("--adjudicate", is_flag=True,
              help="Walk only the chunks people labelled differently and give each its gold "
              "label (stored with your --annotator name).")
@_check_options
@_team_options
@click.option("--delimiter", default=",", show_default=True,
              help="The cell separator of a CSV goldens file opened for the first time.")
def annotate_command(session_path: str, annotator: str, judge: str | None, pass_mark: float,
                     blind_rate: float, sample_size: int | None, design: str, seed: int,
                     adjudicate: bool, check_rate: float, checks_from: str | None,
                     checks_min: float, per_golden: int | None, lease_minutes: float,
                     gate: int | None, delimiter: str) -> None:
    """Open the annotation screen on a session file, or on goldens in JSONL/JSON/CSV.

    A goldens file is imported into a session file beside it (same name, .db) on first
    open; opening it again continues where you stopped (and stops to say so if the file has
    changed since). Every decision is written to the session file the moment you make it.

    \b
    Example:
      annotator annotate sample_sessions/banking.jsonl
      annotator annotate review.db --annotator alice --blind-rate 0.15
      annotator annotate review.db --sample 40 --seed 7
      annotator annotate team.db --adjudicate --annotator carol
      annotator annotate team.db --annotator dan --checks 0.1 --checks-from gold.jsonl
      annotator annotate team.db --annotator erin --sample 300 --per-golden 2
    """
    from annotator.errors import AnnotatorError

    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        # Before anything is imported or drawn: a screen in a pipe draws escape codes for ever.
        raise AnnotatorError(_no_terminal(session_path))
    from annotator.models import GOLDENS_SUFFIXES
    from annotator.store.session import Session

    source = Path(session_path)
    db_path: Path | str
    if is_url(session_path):
        db_path = session_path
    elif source.suffix.lower() in GOLDENS_SUFFIXES:
        from annotator.intake import Intake, sources

        db_path = source.with_suffix(".db")
        separator = _delimiter(delimiter)
        if not db_path.exists() or _unfinished(db_path):
            # Leave nothing behind on a failure, so the next open (after a fix) imports afresh.
            def remembered(session: Session) -> None:
                sources.remember(session, source)
                _warn_alike(session)

            [done] = Intake([source], delimiter=separator).into(db_path, then=remembered)
            for notice in done.notices:
                _say(f"Note: {notice}", err=True)
            _say(f"Imported {counted(done.summary.goldens_added, 'golden')} from {source} into "
                 f"{db_path}; open it again with: annotator annotate {db_path}", err=True)
        elif source.exists():
            with Session(db_path, create=False) as session:
                missing = sources.check(session, source, db_path, delimiter=separator)
            if missing:
                _say(f"Note: {counted(len(missing), 'golden')} of {db_path} "
                     f"{'is' if len(missing) == 1 else 'are'} no longer in {source} ("
                     + ", ".join(missing[:3]) + (", ..." if len(missing) > 3 else "")
                     + "); they stay in the session.", err=True)
    else:
        db_path = source
    from annotator.tui.launch import SCREEN_BUSY_S, run_screen

    with Session(db_path, create=False, busy_timeout=SCREEN_BUSY_S) as session:
        only = None
        pool: list[Check] = []
        if not adjudicate:
            judge = _choose_judge(session, judge)
            if sample_size is not None:
                from annotator.scoring.sampling import draw

                only = draw(session, sample_size, design, seed, judge)["golden_ids"]
            pool, check_rate = _prepare_checks(session, check_rate, checks_from)
            _set_gate(session, gate, checks_min, checks_from)
        _say(run_screen(session, annotator, judge, pass_mark=pass_mark, blind_rate=blind_rate,
                        only=only, adjudicate=adjudicate, checks=pool, check_rate=check_rate,
                        checks_min=checks_min,
                        quota=None if adjudicate else _quota(session, per_golden,
                                                             lease_minutes)),
             err=True)


def _no_terminal(typed: str) -> str:
    """Why annotate cannot run in a pipe, and the commands that can, on the session they can
    open: a goldens file's session is the .db beside it (or made by import), and a path that
    is no session gets the sentence that says so instead."""
    from annotator.models import GOLDENS_SUFFIXES
    from annotator.store.session import Session

    source = Path(typed)
    db: Path | str = typed if is_url(typed) else (
        source.with_suffix(".db") if source.suffix.lower() in GOLDENS_SUFFIXES else source)
    where, session = _hint_word(shown(typed)), _hint_word(shown(db))
    if isinstance(db, Path) and db != source and source.exists() and not db.exists():
        readers = (f"'annotator import {where} --session {session}' makes its session, and "
                   f"'annotator report {session}' reads it in a pipe")
    else:
        with Session(db, create=False):  # a missing or foreign file: that is the error to give
            pass
        readers = f"'annotator info {session}' and 'annotator report {session}' work in a pipe"
    return ("The annotation screen needs a terminal, and this command's input or output is "
            f"redirected. Run 'annotator annotate {where}' in a terminal; {readers}.")


def _prepare_checks(session: Session, check_rate: float, checks_from: str | None
                    ) -> tuple[list[Check], float]:
    """The checks to interleave (kept in the session) and their rate: none without --checks
    or --checks-from; --checks-from alone interleaves at the default rate."""
    if check_rate <= 0 and checks_from is None:
        return [], 0.0
    from annotator.scoring.checks import prepare

    return (prepare(session, Path(checks_from) if checks_from else None),
            check_rate or DEFAULT_CHECK_RATE)


def _unfinished(db_path: Path) -> bool:
    """Whether a session beside a goldens file was left unfinished by its first import (the
    process killed mid-import: an empty file, or a session without a golden): import again."""
    from annotator.store.session import Session

    if db_path.stat().st_size == 0:
        return True
    with Session(db_path, create=False) as session:
        return session.count_goldens() == 0


def _choose_judge(session: Session, judge: str | None) -> str | None:
    """The judge asked for, the only one, none (labelling blind), or the one the person picks."""
    from annotator.resolve import one_judge

    def ask(names: Sequence[str]) -> str:
        shown = {visible(name): name for name in names}  # a name is shown, never obeyed
        answer = click.prompt("Which judge's verdicts do you want to review?",
                              type=click.Choice(list(shown)), default=next(iter(shown)))
        return shown[str(answer)]

    return one_judge(session.judges_judged(), judge, required=False, ask=ask)


def _sending_options(command: Callable[..., None]) -> Callable[..., None]:
    """The options of every command that sends requests: concurrency, rate limits, the
    timeout, retries and the longest Retry-After honoured."""
    options = [
        click.option("--concurrency", type=click.IntRange(1, 1024), default=8,
                     show_default=True),
        click.option("--rpm", type=click.FloatRange(min=0, min_open=True),
                     help="Requests per minute."),
        click.option("--tpm", type=click.FloatRange(min=0, min_open=True),
                     help="Tokens per minute."),
        click.option("--timeout", type=click.FloatRange(min=0, min_open=True),
                     help="Seconds per call (default: fitted to the endpoint: 600 for the first "
                     "calls, which may load a local model, then five times the slowest call "
                     "timed, at least 60)."),
        click.option("--max-retries", type=click.IntRange(0), default=4, show_default=True),
        click.option("--max-wait", type=click.FloatRange(min=0), default=60.0,
                     show_default=True, help="The longest wait, in seconds, a server's "
                     "Retry-After may ask for before a retry (longer or malformed ones wait "
                     "this long)."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


@cli.command("judge")
@click.argument("session_path", metavar="SESSION", type=SESSION)
@click.option("--model", "-m", required=True, help="The model name the endpoint knows.")
@click.option("--provider", type=click.Choice(list(PROVIDERS)), default="openai",
              show_default=True, help="Whose API the endpoint speaks: OpenAI's Chat "
              "Completions (OpenAI and every compatible server), or Anthropic's Messages API "
              "(needs the anthropic extra; key in ANTHROPIC_API_KEY). Stored with the judge.")
@click.option("--base-url", help="The endpoint (default: $OPENAI_BASE_URL, or "
              "$ANTHROPIC_BASE_URL with --provider anthropic, else the provider's own API).")
@click.option("--name", help="The judge's name (default: model and prompt).")
@click.option("--prompt", "prompt_id", type=click.Choice(list(PROMPTS)), default="builtin",
              show_default=True, help="builtin: this project's wording, a request a chunk; "
              "listwise: the same, a request a golden; ragas: RAGAS 0.4's own ContextPrecision "
              "prompt (needs the ragas extra). 'annotator prompts' shows them.")
@click.option("--prompt-file", type=click.Path(dir_okay=False),
              help="Your own prompt, a TOML file ('annotator prompts show builtin > mine.toml' "
              "writes one to start from).")
@click.option("--against", type=click.Choice(["reference", "response"]),
              help="Judge usefulness for the reference answer (the default), or for the "
              "response (RAGAS's 'without reference' variant).")
@click.option("--examples", "example_count", type=click.IntRange(1, 64),
              help="Show the judge N human-labelled chunks of the dev split as examples, half "
              "useful and half noise (it is then never scored on their goldens).")
@click.option("--annotator", "-a", help="--examples: whose labels (default: the team's).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of --examples.")
@click.option("--window", type=click.IntRange(2), default=20, show_default=True,
              help="Listwise: the most chunks one request holds; longer goldens go in "
              "windows overlapping by a quarter, whose verdicts on shared chunks must agree.")
@click.option("--dry-run", is_flag=True, help="Print the calls, tokens, cost and time this run "
              "would take, and send nothing.")
@click.option("--batch", "batch", is_flag=True, help="Send the requests through the provider's "
              "Batch API (results within 24 h, at --batch-discount); follow with 'annotator "
              "batches SESSION --wait'.")
@click.option("--export-requests", type=click.Path(),
              help="Write the requests as a Batch API JSONL file for an offline engine (vllm "
              "run-batch); store its results with 'annotator import-results'. With "
              "--shard-size, a new folder of request files (shards) instead.")
@click.option("--shard-size", type=click.IntRange(1), default=None,
              help="With --export-requests: at most this many requests a file, the files in "
              "one new folder, for an engine that runs shards in parallel (Ray Data, Spark).")
@click.option("--shard-format", "--format", "shard_format", type=click.Choice(["jsonl", "parquet"]),
              default="jsonl", show_default=True,
              help="With --shard-size: the shards' format (parquet for engines that read "
              "tables, such as Spark; needs the parquet extra). --format is its older name.")
@click.option("--batch-discount", type=click.FloatRange(0, 1), default=0.5, show_default=True,
              help="The share of the live price a batch costs.")
@click.option("--batch-max-requests", type=click.IntRange(1),
              help="Requests per batch (default: the provider's limit, 50,000 at OpenAI and "
              "100,000 at Anthropic).")
@click.option("--batch-max-mb", type=click.FloatRange(min=0, min_open=True),
              help="Megabytes per batch (default: the provider's limit, 200 at OpenAI and 256 "
              "at Anthropic).")
@_sending_options
@click.option("--logprobs/--no-logprobs", default=True, show_default=True,
              help="Ask for the verdict token's logprobs to estimate P(relevant).")
@click.option("--system-as-user", is_flag=True, help="Put the judge's instructions at the head "
              "of the first user message, for a chat template that drops system messages "
              "(llama-cpp-python's 'gemma', say); part of the judge's definition.")
@click.option("--price-in", type=float, help="USD per million prompt tokens, to show cost.")
@click.option("--price-out", type=float, help="USD per million completion tokens.")
@click.option("--price-cached", type=float, help="USD per million prompt tokens served from "
              "the provider's prompt cache (default: billed as other prompt tokens).")
@click.option("--limit", type=click.IntRange(1), help="Judge at most N chunks this run.")
@click.option("--repeat", type=click.IntRange(1, 100), default=1, show_default=True,
              help="Judge every chunk K times to measure how often its verdict flips (the "
              "first run's verdict is the one in force).")
@click.option("--temperature", type=float, default=0.0, show_default=True,
              help="Sampling temperature (the ragas prompt uses RAGAS's own 0.01).")
@click.option("--trust", "trusted", is_flag=True,
              help="Then apply the judge's stored trust threshold ('annotator trust'): say how "
                   "many of its verdicts to escalate to a stronger judge or a person.")
@click.option("--max-tokens", type=click.IntRange(1),
              help="Token limit of a reply (default: 512; listwise 128 a chunk of the window "
              "and 64 more; a judge run before keeps its own; the ragas prompt uses RAGAS's "
              "own 1024).")
@_stops_on_signals
def judge_command(session_path: str, model: str, provider: str, base_url: str | None,
                  name: str | None, prompt_id: str, prompt_file: str | None,
                  against: str | None, example_count: int | None, annotator: str | None,
                  seed: int, window: int, dry_run: bool, batch: bool,
                  export_requests: str | None, shard_size: int | None, shard_format: str,
                  batch_discount: float, batch_max_requests: int | None,
                  batch_max_mb: float | None,
                  concurrency: int, rpm: float | None,
                  tpm: float | None, timeout: float | None, max_retries: int, max_wait: float,
                  logprobs: bool, system_as_user: bool, price_in: float | None,
                  price_out: float | None, price_cached: float | None, limit: int | None,
                  repeat: int, temperature: float, max_tokens: int | None,
                  trusted: bool) -> None:
    """Pre-fill every chunk's verdict and reason with an LLM judge.

    Works with any OpenAI-compatible endpoint (OpenAI, Groq, Ollama, vLLM, llama.cpp), and
    with Anthropic's own API (--provider anthropic). The API key is read from OPENAI_API_KEY
    (ANTHROPIC_API_KEY) and never stored; a local server needs none. Each call is stored the
    moment it ends; run the same command again to resume after a stop (Ctrl-C keeps
    everything finished) or to retry the chunks that failed.

    \b
    Example:
      annotator judge review.db --model gpt-4o-mini --price-in 0.15 --price-out 0.6
      annotator judge review.db --model llama3.1 --base-url http://localhost:11434/v1
      annotator judge review.db --model gpt-4o-mini --prompt-file mine.toml --examples 8
      annotator judge review.db --provider anthropic --model claude-haiku-4-5 --batch
    """
    import asyncio
    import os

    from annotator.judge.runner import JudgeStopped, RunOptions, RunStats, run_judge
    from annotator.judge.template import TemplatePrompt
    from annotator.judge.transport import connect, provider_of
    from annotator.judge.types import JudgeSettings
    from annotator.models import Price
    from annotator.progress import judging
    from annotator.redact import without_credentials

    transport = provider_of(provider)
    base_url = base_url or os.environ.get(transport.url_env) or None
    name = name or _judge_name(model, prompt_id, prompt_file, example_count)
    with _open(session_path, create=False) as session:  # read only, before anything is sent
        prompt = _judge_prompt(session, name, prompt_id, prompt_file, against, example_count,
                               annotator, seed)
        if provider != "openai" and not isinstance(prompt, TemplatePrompt):
            raise click.UsageError(f"The {prompt.id} prompt is sent by its own library, which "
                                   "speaks OpenAI's protocol only; judge through "
                                   f"--provider {provider} with a template prompt (builtin, "
                                   "listwise or --prompt-file).")
        existing = session.judges()
        if trusted and session.trust_threshold(name) is None:
            raise click.UsageError(
                f"--trust applies the stored trust threshold of '{name}', and it has none yet: fit "
                f"one with 'annotator trust {session_path} --judge {name}' (the judge needs "
                "verdicts on labelled dev and test goldens first).")
    if prompt.sampling is not None:  # a style that must run with its own sampling
        temperature, max_tokens = prompt.sampling
    elif max_tokens is None:
        from annotator.judge.types import default_max_tokens

        # A judge run before resumes with its own limit (another would be another request).
        stored = next((j.parameters.get("max_tokens") for j in existing if j.name == name), None)
        max_tokens = stored or default_max_tokens(prompt.listwise, window)
    aligned_on = getattr(prompt, "aligned_on", None)
    if aligned_on is not None and aligned_on != model:
        _say(f"Note: {prompt_file} was aligned on {aligned_on}, and this run judges with "
             f"{model}: a prompt tuned for one model often does not carry to the next. Align it "
             f"on {model} ('annotator align {session_path} --judge NAME --optimizer-model M'), "
             f"or put both on the leaderboard ('annotator judges {session_path}').", err=True)
    stored_url, url_secrets = without_credentials(base_url)
    if url_secrets:
        _say("Note: the user name and password in --base-url are sent with every request but "
             "never stored; the session keeps the address without them.", err=True)
    settings = JudgeSettings(model=model, prompt=prompt, base_url=stored_url,
                             temperature=temperature, max_tokens=max_tokens, logprobs=logprobs,
                             window=window if prompt.listwise else None,
                             system_as_user=system_as_user, provider=provider)
    options = RunOptions(concurrency=concurrency, timeout=timeout, max_retries=max_retries,
                         limit=limit, repeat=repeat, max_wait=max_wait)
    price = Price(price_in, price_out, price_cached) if (
        price_in is not None and price_out is not None) else None
    from annotator.judge.batch import Limits

    if shard_size is not None and export_requests is None:
        raise click.UsageError("--shard-size splits the file --export-requests writes; give "
                               "--export-requests FOLDER with it.")
    if shard_format != "jsonl" and shard_size is None:
        raise click.UsageError("--shard-format parquet writes shards: give --export-requests FOLDER "
                               "--shard-size N with it.")
    if export_requests is not None and provider != "openai":
        raise click.UsageError("--export-requests writes OpenAI's Batch API lines for an "
                               "offline engine; a judge on --provider anthropic is batched by "
                               "Anthropic itself: give --batch.")
    own = Limits.of(provider)
    limits = (Limits(batch_max_requests or own.max_requests,
                     int(batch_max_mb * 1_000_000) if batch_max_mb else own.max_bytes)
              if shard_size is None else Limits(shard_size, 2**62))
    offline = batch or export_requests is not None
    if batch and export_requests is not None:
        raise click.UsageError("Give --batch (the provider runs it) or --export-requests (you "
                               "run it), not both.")
    if offline and price is not None:
        price = price.discounted(batch_discount)
    if dry_run:
        _print_dry_run(session_path, name, settings, options, price, rpm, tpm,
                       limits if batch else None)
        return
    if offline:
        _judge_in_batches(session_path, name, settings, options, price, limits, base_url,
                          export_requests, shards=shard_size is not None,
                          shard_format=shard_format)
        return
    _, key, secrets = _endpoint(base_url, provider=provider)
    stats = RunStats()

    async def judge(session: Session, show: Callable[[RunStats], None]) -> None:
        async with connect(provider, base_url, key, concurrency=concurrency, rpm=rpm,
                           tpm=tpm) as client:
            await run_judge(session, name, settings, client, options, stats, on_progress=show,
                            secrets=secrets)

    interrupted = False
    stopped: JudgeStopped | None = None
    with _open(session_path) as session, judging(name, price) as show:
        if price is not None:
            session.set_price(name, price)  # for the leaderboard's cost column
        try:
            asyncio.run(judge(session, show))
        except KeyboardInterrupt:
            show(stats)
            interrupted = True
        except JudgeStopped as error:
            stopped = error
    # Sentences only once the progress bar is closed, so none is drawn inside it.
    gone = "" if stats.kept else f" Judge '{name}' is not kept: it has no verdict yet."
    if interrupted:
        _say(f"Stopped. {counted(stats.judged, 'chunk')} judged and stored; run the same "
             f"command again to judge the rest.{gone}", err=True)
        sys.exit(130)
    if stopped is not None:
        raise stopped
    cost = stats.cost(price)
    seconds = time.monotonic() - stats.started
    _say(
        f"Judge '{name}': {counted(stats.judged, 'chunk')} judged in {seconds:.1f} s"
        + (f" (each chunk {repeat} times)" if repeat > 1 else "")
        + f", {stats.skipped:,} already judged, {counted(stats.errors, 'failed call')}"
        + (f" ({counted(stats.requests, 'HTTP request')} in all)"
           if stats.requests > stats.judged + stats.errors else "")
        + (f", {counted(stats.gave_up, 'chunk')} left for the next run" if stats.gave_up else "")
        + (f", {counted(stats.no_answer, 'chunk')} without a {against}" if stats.no_answer else "")
        + f". Tokens: {stats.tokens_in:,} in"
        + (f" ({stats.tokens_cached:,} from the provider's cache)" if stats.tokens_cached else "")
        + f", {stats.tokens_out:,} out"
        + (f", ${cost:.4f}" if cost is not None else "") + "." + gone)
    groups = stats.failures.groups()
    for group in groups[:3]:
        _say(group.sentence())
    if len(groups) > 3:
        _say(f"{counted(sum(g.count for g in groups[3:]), 'more failed call')} had other "
             "causes" + ("; every error is stored with its call." if stats.kept else "."))
    for refusal in stats.refused:
        _say(f"Note: {refusal}.")
    if prompt.schema is not None and (stats.refused
                                      or stats.response_format != transport.formats[0]
                                      or stats.logprobs != (logprobs and transport.logprobs)):
        from annotator.judge.client import FORMAT_WORDS

        _say(f"Replies are asked for with {FORMAT_WORDS[stats.response_format]}, "
             + ("with logprobs" if stats.logprobs else "without logprobs")
             + "; the next run of this judge starts from there.")
    for warning in stats.warnings:
        _say(f"Warning: {warning}", err=True)
    if trusted and stats.kept:
        _say_escalated(session_path, name)
    if stats.gave_up:
        sys.exit(1)


def _say_escalated(session_path: str, judge: str) -> None:
    """How many of the judge's verdicts its stored trust threshold keeps and escalates."""
    from annotator.calibration.trust import escalated

    with _open(session_path, reads_only=True) as session:
        stored = session.trust_threshold(judge)
        sent = escalated(session, judge)
        judged = session.judge_verdict_counts().get(judge, 0)
    if stored is None:  # removed while the judge ran
        return
    threshold = stored["threshold"]
    kept = (f"keeps the {judged - len(sent):,} whose confidence is at least {threshold:.2f}"
            if threshold is not None else "keeps none (no threshold reached the target)")
    _say(f"Trust: of {counted(judged, 'verdict')} of '{judge}', its threshold (agreement "
         f"{1 - stored['alpha']:.0%} with probability {1 - stored['delta']:.0%}) {kept}; "
         f"{counted(len(sent), 'chunk')} to escalate: 'annotator trust {session_path} --judge "
         f"{judge} --escalated' lists them.")


def _judge_prompt(session: Session, name: str, prompt_id: str, prompt_file: str | None,
                  against: str | None, example_count: int | None, annotator: str | None,
                  seed: int) -> JudgePrompt:
    """The prompt a judge run uses: a style or a file, with examples drawn from the session
    (for a judge already run, the examples it was shown: a rerun resumes)."""
    from annotator.judge.styles import make_prompt
    from annotator.judge.template import TemplatePrompt
    from annotator.judge.types import Against

    side: Against | None = ("reference" if against == "reference" else "response"
                            if against == "response" else None)
    if prompt_file is not None:
        from annotator.judge import prompt_file as files

        if prompt_id != "builtin":
            raise click.UsageError("Give --prompt or --prompt-file, not both.")
        try:
            prompt: JudgePrompt = files.load(prompt_file, side)
        except files.PromptFileError as error:
            _say(f"Error: {error}", err=True)
            sys.exit(2)  # nothing was stored
    else:
        prompt = make_prompt(prompt_id, side or "reference")
    if example_count:
        if not isinstance(prompt, TemplatePrompt):
            raise click.UsageError(f"--examples works with template prompts; the {prompt_id} "
                                   "prompt is kept exactly as its library sends it.")
        from annotator.calibration.examples import draw_examples, stored_examples

        shown = stored_examples(session, name)
        if shown is not None and len(shown) == example_count:
            _say(f"Note: judge '{name}' keeps the {counted(len(shown), 'example')} it was shown "
                 f"when first run, so this run resumes with the same prompt (--seed {seed} draws "
                 "nothing new). To judge with other examples, give the run a new --name.",
                 err=True)
            prompt = prompt.with_examples(shown)
        else:
            prompt = prompt.with_examples(draw_examples(session, example_count, seed,
                                                        prompt.against, annotator))
    return prompt


def _judge_name(model: str, prompt_id: str, prompt_file: str | None,
                example_count: int | None) -> str:
    """The default judge name: model and prompt, and how many examples it was shown."""
    style = Path(prompt_file).stem if prompt_file is not None else prompt_id
    return f"{model}-{style}" + (f"-ex{example_count}" if example_count else "")


def _judge_in_batches(session_path: str, name: str, settings: JudgeSettings,
                      options: RunOptions, price: Price | None, limits: Limits,
                      base_url: str | None, export: str | None, *, shards: bool = False,
                      shard_format: str = "jsonl") -> None:
    """--batch: write, upload and create the batches; --export-requests: write the file (or,
    with ``shards``, the folder of files)."""
    import asyncio

    from annotator.judge.batch import Started, start_round
    from annotator.judge.runner import RunStats
    from annotator.judge.transport import connect
    from annotator.progress import counter

    stats = RunStats()
    key = None if export else _api_key(base_url, settings.provider)
    with _open(session_path, create=False) as session, \
            counter("Writing requests", unit="chunks") as advance:

        async def start() -> Started:
            if export is not None:
                return await start_round(session, name, settings, options, stats, limits,
                                         price=price, export=Path(export), shards=shards,
                                         shard_format=shard_format, on_progress=advance)
            assert key is not None
            async with connect(settings.provider, base_url, key) as client:
                try:
                    return await start_round(session, name, settings, options, stats, limits,
                                             price=price, client=client, on_progress=advance)
                except Exception as error:
                    raise _endpoint_error(error, name, base_url, following=False) from None

        started = asyncio.run(start())
    current = started.round
    if not current.requests:
        _say(f"Nothing to send: {stats.skipped:,} chunks already judged"
             + (f", {current.busy:,} out in batches" if current.busy else "") + ".")
    elif export is not None and shards:
        _say(f"Wrote {counted(current.requests, 'request')} for "
             f"{counted(current.chunks, 'chunk')} in {counted(len(current.parts), 'shard')} to "
             f"{export}/. Run each shard anywhere (a results file a shard, in one folder), then: "
             f"annotator import-results {session_path} RESULTS-FOLDER")
    elif export is not None:
        _say(f"Wrote {counted(current.requests, 'request')} for "
             f"{counted(current.chunks, 'chunk')} to {export}. Run them anywhere "
             f"(e.g. vllm run-batch -i {export} -o results.jsonl), then: annotator "
             f"import-results {session_path} results.jsonl")
    else:
        _say(f"Created {counted(len(started.batch_ids), 'batch', 'batches')} for "
             f"{counted(current.chunks, 'chunk')} ({counted(current.requests, 'request')}): "
             f"{', '.join(started.batch_ids)}. Follow them with 'annotator batches "
             f"{session_path} --wait' (the provider has up to 24 h); nothing is lost if you "
             "stop and come back.")


def _print_dry_run(session_path: str, name: str, settings: JudgeSettings, options: RunOptions,
                   price: Price | None, rpm: float | None, tpm: float | None,
                   limits: Limits | None = None, tasks: list[Task] | None = None) -> None:
    """Print what a run would send and cost (a judge run's, or these ``tasks``'); send
    nothing, write nothing."""
    from annotator.judge.plan import dry_run

    with _open(session_path, create=False) as session:
        plan = dry_run(session, name, settings, options, price, rpm, tpm, limits, tasks)
    minutes = ("" if plan.seconds is None else f"{plan.seconds:.0f} s" if plan.seconds < 120
               else f"{plan.seconds / 60:,.1f} min")
    rows = [
        ("judge", name),
        ("calls", f"{plan.calls:,} for {counted(plan.chunks, 'chunk')}"
         + (f" ({plan.skipped:,} already judged)" if plan.skipped else "")
         + (f" ({plan.no_answer:,} without the answer the prompt needs)"
            if plan.no_answer else "")),
        ("prompt tokens", f"{plan.prompt_tokens:,} (counted by {plan.counted_by})"),
        ("completion tokens", f"{plan.completion_tokens:,} expected ({plan.completion_basis}); "
         f"at most {plan.max_completion_tokens:,}"),
        ("cost", f"${plan.cost:,.4f}" if plan.cost is not None else
         "give --price-in and --price-out to see it"),
    ]
    if limits is None:
        rows.append(("time", f"at least {minutes} ({plan.time_basis})" if minutes
                     else plan.time_basis))
    else:  # a batch's time is the provider's: what it is given is files, not a rate
        rows.append(("batches", f"{counted(plan.files, 'batch', 'batches')} in as many files "
                     f"({plan.request_bytes / 1e6:,.1f} MB of requests); results within 24 h; "
                     "the cost above is at the batch price"))
    width = max(len(k) for k, _ in rows)
    for key, text in rows:
        _say(f"{key.ljust(width)}  {text}")
    _say("Nothing was sent (--dry-run).")


def _api_key(base_url: str | None, provider: str = "openai") -> str:
    """The provider's key from its environment variable (OPENAI_API_KEY, ANTHROPIC_API_KEY),
    or the placeholder a local server accepts; an error for the provider's own API."""
    import os
    from urllib.parse import urlsplit

    from annotator.errors import AnnotatorError
    from annotator.judge.client import LOCAL_KEY
    from annotator.judge.transport import provider_of

    transport = provider_of(provider)
    key = os.environ.get(transport.key_env)
    if key:
        from annotator.redact import remember

        remember(key)  # never stored, printed or logged, whatever a server echoes
        return key
    if base_url is None or urlsplit(base_url).hostname == urlsplit(transport.default_url).hostname:
        raise AnnotatorError(f"{transport.key_env} is not set. Export your key (it is read "
                             "from the environment and never stored), or point --base-url at a "
                             "local server that needs none.")
    return LOCAL_KEY


def _endpoint(given: str | None, stored: str | None = None, provider: str = "openai"
              ) -> tuple[str | None, str, tuple[str, ...]]:
    """Where to send (the --base-url given, else the judge's stored one), the API key, and the
    secrets no reply may show (a password in the given URL, the key itself)."""
    from annotator.judge.client import LOCAL_KEY
    from annotator.redact import without_credentials

    url = given or stored
    _, url_secrets = without_credentials(given)
    key = _api_key(url, provider)
    return url, key, (*url_secrets, *(() if key == LOCAL_KEY else (key,)))


@cli.command("probe")
@click.argument("session_path", metavar="SESSION", type=SESSION_EXISTS)
@click.option("--judge", "-j", help="Whose gullibility to test (default: the only judge); its "
              "stored settings are used as they are.")
@click.option("--goldens", "golden_count", type=click.IntRange(1), default=100,
              show_default=True, help="Goldens drawn at random (by --seed) to make probes for.")
@click.option("--per-golden", type=click.IntRange(1, 20), default=1, show_default=True,
              help="Probes of each kind per golden.")
@click.option("--kinds", default="all", show_default=True,
              help="Which probes, comma-separated: stuffed, instruction, padded (or all).")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the goldens drawn and of the probes' texts.")
@click.option("--base-url", help="Send to this endpoint instead of the judge's stored one "
              "(the same server moved).")
@_sending_options
@_stops_on_signals
def probe_command(session_path: str, judge: str | None, golden_count: int, per_golden: int,
                  kinds: str, seed: int, base_url: str | None, concurrency: int,
                  rpm: float | None, tpm: float | None, timeout: float | None,
                  max_retries: int, max_wait: float) -> None:
    """Test a judge with noise chunks made to fool it, and say how often it is fooled.

    Each probe is another golden's chunk put to a golden's question: stuffed with the
    question's words, carrying an instruction to call it relevant, or padded to the golden's
    longest chunk. A probe is noise by construction, so every 'useful' is a false positive.
    Probes are kept apart from the chunks: no agreement, CP, export or queue ever includes
    one. 'annotator report' and 'annotator judges' show the rates; run again to resume, or
    with --judge OTHER to probe another judge on the same probes.

    \b
    Example:
      annotator probe review.db --judge gpt-4o-mini-builtin --goldens 50
    """
    import asyncio

    from annotator.judge.runner import (
        JudgeStopped,
        RunOptions,
        RunStats,
        run_probes,
        stored_settings,
    )
    from annotator.judge.transport import connect
    from annotator.progress import judging, working
    from annotator.report.build import choose_judge
    from annotator.scoring.probes import add_probes, parse_kinds, probe_rates, rates_sentence, summary

    chosen = parse_kinds(kinds)
    with _open(session_path) as session:
        name = choose_judge(session, judge)
        stored = {j.name: j for j in session.judges()}[name]
        settings = stored_settings(stored)
        url, key, secrets = _endpoint(base_url, stored.base_url, settings.provider)
        with working("Making noise chunks from other goldens"):
            made = add_probes(session, goldens=golden_count, per_golden=per_golden,
                              kinds=chosen, seed=seed)
        _say(summary(made))
        options = RunOptions(concurrency=concurrency, timeout=timeout, max_retries=max_retries,
                             max_wait=max_wait)
        stats = RunStats()

        async def probe(show: Callable[[RunStats], None]) -> None:
            async with connect(settings.provider, url, key, concurrency=concurrency, rpm=rpm,
                               tpm=tpm) as client:
                await run_probes(session, name, settings, client, options, stats,
                                 on_progress=show, secrets=secrets)

        try:
            with judging(name, session.price(name)) as show:
                asyncio.run(probe(show))
        except KeyboardInterrupt:
            _say("Stopped. Every probe answered is stored; run the same command again to "
                 "judge the rest.", err=True)
            sys.exit(130)
        except JudgeStopped as stopped:
            raise stopped from None
        rates = probe_rates(session, name).get(name, {})
        unanswered = len(session.probes()) - len(session.probes_answered(name))
    _say(rates_sentence(name, rates))
    if unanswered:
        _say(f"{counted(unanswered, 'probe')} got no verdict; run the same command again to "
             "retry them.", err=True)
        sys.exit(1)


@cli.command("recheck")
@click.argument("session_path", metavar="SESSION", type=SESSION_EXISTS)
@click.option("--judge", "-j", help="Which judge to re-check (default: the only judge); its "
              "stored settings are used as they are.")
@click.option("--canary", "canary_size", type=click.IntRange(1),
              help="Draw whole goldens until this many chunks for the canary (default: every "
              "chunk people labelled in the test split). Chosen once, then frozen.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the canary's draw and of the bootstrap.")
@click.option("--tolerance", type=click.FloatRange(0, 2), default=0.05, show_default=True,
              help="The drop in kappa you accept: worse means a drop beyond it, and beyond "
              "chance.")
@click.option("--alpha", type=click.FloatRange(0, 0.5, min_open=True), default=0.05,
              show_default=True, help="Error rate of the test and of the running bound.")
@click.option("--history", "show_history", is_flag=True,
              help="Show every re-check of the judge and the running bound on the drop "
              "instead of re-checking (exit 1 when its alarm sounds).")
@click.option("--plan", "show_plan", is_flag=True,
              help="Say how many canary chunks find a given --drop, sending nothing.")
@click.option("--drop", type=click.FloatRange(0, 1, min_open=True),
              help="With --plan: the drop in agreement with people to find (0.05: 5 points).")
@click.option("--power", type=click.FloatRange(0.5, 0.99), default=0.9, show_default=True,
              help="With --plan: the share of re-checks that must find the drop.")
@click.option("--dry-run", is_flag=True, help="Print the calls and their cost, send nothing.")
@click.option("--price-in", type=click.FloatRange(0), help="USD per million prompt tokens "
              "(default: the judge's remembered price).")
@click.option("--price-out", type=click.FloatRange(0), help="USD per million completion tokens.")
@click.option("--format", "-f", "fmt", type=click.Choice(["table", "json"]), default="table",
              show_default=True)
@click.option("--bootstrap", "resamples", type=click.IntRange(0), default=2000,
              show_default=True, help="Bootstrap resamples over goldens for the kappa drop.")
@click.option("--base-url", help="Send to this endpoint instead of the judge's stored one "
              "(the same server moved).")
@_sending_options
@_stops_on_signals
def recheck_command(session_path: str, judge: str | None, canary_size: int | None, seed: int,
                    tolerance: float, alpha: float, show_history: bool, show_plan: bool,
                    drop: float | None, power: float, dry_run: bool, price_in: float | None,
                    price_out: float | None, fmt: str, resamples: int, base_url: str | None,
                    concurrency: int, rpm: float | None, tpm: float | None,
                    timeout: float | None, max_retries: int, max_wait: float) -> None:
    """Re-judge a frozen canary as the judge is served now, and say whether it got worse.

    The canary (by default every chunk people labelled in the test split) is chosen once and
    stored, so every re-check asks the same chunks. The re-check's verdicts are stored apart
    from the judge's and compared with its verdicts in force: flips by direction, the drop in
    kappa with a paired golden bootstrap interval, and the cluster McNemar test. Exit status
    1 when the judge is worse (the drop passes --tolerance, and beyond chance), 0 otherwise,
    2 for a usage error: it runs from CI or cron. --history shows every re-check and a running
    bound on the drop that stays valid however often one looks.

    \b
    Examples:
      annotator recheck review.db --judge gpt-4o-mini-builtin --dry-run
      annotator recheck review.db --judge gpt-4o-mini-builtin
      annotator recheck review.db --judge gpt-4o-mini-builtin --history
      annotator recheck review.db --plan --drop 0.05
    """
    from annotator.report.build import choose_judge

    if drop is not None and not show_plan:
        raise click.UsageError("--drop sizes a canary: give --plan with it.")
    if show_plan and drop is None:
        raise click.UsageError("--plan needs --drop: the drop in agreement to find, e.g. "
                               "--drop 0.05.")
    if show_plan + show_history + dry_run > 1:
        raise click.UsageError("Give one of --plan, --history and --dry-run.")
    if show_plan or show_history:
        with _open(session_path, reads_only=True) as session:
            name = choose_judge(session, judge)
            if show_plan:
                _print_recheck_plan(session, name, drop or 0.0, tolerance, alpha, power, fmt)
            else:
                _print_recheck_history(session, name, tolerance, alpha, fmt)
        return
    import asyncio

    from annotator.calibration.recheck import choose_canary, finish_recheck, recheck_tasks, run_recheck
    from annotator.judge.runner import JudgeStopped, RunOptions, RunStats, stored_settings
    from annotator.judge.transport import connect
    from annotator.models import Price
    from annotator.progress import judging

    options = RunOptions(concurrency=concurrency, timeout=timeout, max_retries=max_retries,
                         max_wait=max_wait)
    with _open(session_path) as session:
        name = choose_judge(session, judge)
        stored = {j.name: j for j in session.judges()}[name]
        settings = stored_settings(stored)
        price = (Price(price_in, price_out) if price_in is not None and price_out is not None
                 else session.price(name))
        if dry_run:
            canary, _ = choose_canary(session, canary_size, seed, store=False)
            opened = session.open_recheck(name)
            answered = set(session.recheck_verdicts(int(opened["id"]))) if opened else set()
            tasks = recheck_tasks(session, settings, canary, answered, RunStats())
            frozen = bool(session.canary()[0])
    if dry_run:
        _say(f"Re-check of judge '{name}' on the canary, {canary.sentence()}"
             + ("" if frozen else " (not chosen yet: the first re-check freezes it)") + ".")
        _print_dry_run(session_path, name, settings, options, price, rpm, tpm, tasks=tasks)
        return
    url, key, secrets = _endpoint(base_url, stored.base_url, settings.provider)
    stats = RunStats()
    with _open(session_path) as session:
        canary, chosen_now = choose_canary(session, canary_size, seed)
        if chosen_now:
            _say(f"The canary is chosen and frozen: {canary.sentence()}.", err=True)

        async def recheck(show: Callable[[RunStats], None]) -> int:
            async with connect(settings.provider, url, key, concurrency=concurrency, rpm=rpm,
                               tpm=tpm) as client:
                return await run_recheck(session, name, settings, client, options, stats,
                                         canary, on_progress=show, secrets=secrets)

        try:
            with judging(f"{name} (re-check)", price) as show:
                recheck_id = asyncio.run(recheck(show))
        except KeyboardInterrupt:
            _say("Stopped. Every answer is stored; run the same command again to finish the "
                 "re-check.", err=True)
            sys.exit(130)
        except JudgeStopped as stopped:
            raise stopped from None
        done = finish_recheck(session, name, recheck_id, canary, tolerance=tolerance,
                              alpha=alpha, resamples=resamples, seed=seed)
        epochs = {e["epoch"]: e for e in session.judge_epochs(name, counted=False)}
        if fmt == "json":  # the table leaves the running bound to --history
            from annotator.calibration.recheck import history

            looks, in_agreement = history(session, name, canary, tolerance=tolerance,
                                          alpha=alpha)
    if fmt == "json":
        from annotator.calibration.recheck import figures_json
        from annotator.jsonout import write_json

        bound = looks[-1].bound if looks else None
        write_json({"recheck": done.recheck_id, "judge": name,
                    "epoch_before": done.epoch_before, "epochs_now": done.epochs_now,
                    "canary": {"chunks": len(canary.chunk_ids), **canary.how},
                    "left_out": done.left_out, **figures_json(done.figures),
                    "running_bound": None if bound is None else {
                        "drop": bound.drop, "lower": bound.lower, "alarm": bound.alarm,
                        "tolerance_in_agreement": in_agreement}}, sys.stdout)
    else:
        _print_recheck(done, canary.sentence(), epochs, stats)
    if done.figures.worse:
        sys.exit(1)


def _served(epoch: str | None, epochs: dict[str, dict[str, Any]]) -> str:
    """'epoch E (model M, fingerprint F)', or 'no epoch'."""
    from annotator.judge.runner import served_words

    if epoch is None:
        return "no epoch"
    known = epochs.get(epoch)
    return f"epoch {epoch}" + (f" ({served_words(known['model'], known['fingerprint'])})"
                               if known else "")


def _print_recheck(done: Recheck, canary: str, epochs: dict[str, dict[str, Any]],
                   stats: RunStats) -> None:
    """A finished re-check for a person: what was compared, what moved, the decision."""
    from annotator.stats.stat import number

    f = done.figures
    now = ", ".join(_served(e, epochs) for e in done.epochs_now) or "no verdict"
    changed = done.epochs_now and done.epochs_now != [done.epoch_before]
    left = sum(done.left_out.values())
    rows = [
        ("canary", canary),
        ("before", "the judge's verdicts in force, " + _served(done.epoch_before, epochs)),
        ("now", now + (" - a new epoch: the provider serves the judge differently"
                       if changed else " - the same epoch")),
        ("compared", f"{counted(f.chunks, 'chunk')} of {counted(f.goldens, 'golden')}"
         + (f" ({left:,} left out: " + ", ".join(f"{why} {n:,}" for why, n
                                                   in done.left_out.items()) + ")"
            if left else "")),
        ("agreement", f"{f.agreement_before.format()} before, {f.agreement_after.format()} now"),
        ("kappa", f"{f.kappa_before.format()} before, {f.kappa_after.format()} now; drop "
         f"{f.kappa_drop.format(interval=True)}"),
        ("flips", f"{f.flips.useful_to_noise:,} useful -> noise, {f.flips.noise_to_useful:,} "
         f"noise -> useful; {f.flips.right_to_wrong:,} right -> wrong, "
         f"{f.flips.wrong_to_right:,} wrong -> right"),
        ("McNemar", f"one-sided p {f.worse_p.value:.3g} that it got more chunks wrong (goldens "
         "as clusters)" if f.worse_p.value is not None else str(f.worse_p.reason)),
        ("calls", f"{counted(stats.judged, 'chunk')} judged, "
         f"{counted(stats.errors, 'failed call')}; tokens {stats.tokens_in:,} in, "
         f"{stats.tokens_out:,} out"),
    ]
    width = max(len(k) for k, _ in rows)
    _say(f"Re-check {done.recheck_id} of judge '{done.judge}':")
    for key, text in rows:
        _say(f"  {key.ljust(width)}  {text}")
    drop = f.kappa_drop.value
    if f.worse:
        _say(f"Worse: kappa dropped {number(drop or 0, 3)}, beyond the tolerance "
             f"{f.tolerance:g}, and the judge got more chunks wrong beyond chance (p "
             f"{f.worse_p.format()} < {f.alpha:g}). Look at the flips ('annotator recheck "
             f"--history' shows the trend), and re-measure or replace the judge.")
    elif drop is not None and drop > f.tolerance:
        _say(f"Not shown worse: kappa dropped {number(drop, 3)}, beyond the tolerance, but not "
             f"beyond chance (p {f.worse_p.format()}); a larger canary would tell "
             "('annotator recheck --plan --drop 0.05').")
    else:
        _say(f"Not worse: the kappa drop is within the tolerance {f.tolerance:g}.")


def _print_recheck_history(session: Session, name: str, tolerance: float, alpha: float,
                           fmt: str) -> None:
    """Every re-check of a judge and the running bound; exit 1 when its alarm sounds."""
    from annotator.calibration.recheck import Canary, history
    from annotator.errors import AnnotatorError
    from annotator.stats.stat import number

    ids, how = session.canary()
    if not ids or how is None:
        raise AnnotatorError(f"Judge '{name}' has never been re-checked: run 'annotator recheck "
                             f"{_hint_word(session.where)} --judge {name}' first.")
    looks, in_agreement = history(session, name, Canary(ids, how), tolerance=tolerance,
                                  alpha=alpha)
    if not looks:
        raise AnnotatorError(f"Judge '{name}' has never been re-checked: run 'annotator recheck "
                             f"{_hint_word(session.where)} --judge {name}' first.")
    alarm = looks[-1].bound is not None and looks[-1].bound.alarm
    if fmt == "json":
        from annotator.jsonout import write_json

        write_json({"judge": name, "tolerance": tolerance, "alpha": alpha,
                    "tolerance_in_agreement": in_agreement, "alarm": alarm, "rechecks": [
                        {"recheck": look.recheck["id"], "at": look.recheck["finished_at"],
                         "epoch_before": look.recheck["epoch_before"], **look.recheck["figures"],
                         "running_bound": None if look.bound is None else {
                             "drop": look.bound.drop, "lower": look.bound.lower,
                             "alarm": look.bound.alarm}} for look in looks]}, sys.stdout)
    else:
        from rich import box
        from rich.table import Table
        from rich.text import Text

        # A judge's name is data: a Text title, so brackets in it are never read as markup. The
        # table fits 80 columns: kappa before and now in one cell, no side borders.
        table = Table(title=Text(f"Re-checks of judge '{visible(name)}'"), title_justify="left",
                      box=box.SIMPLE_HEAD, pad_edge=False)
        for column in ("#", "finished", "kappa", "drop", "p", "worse", "agr. drop", "bound",
                       "alarm"):
            table.add_column(column, justify="left" if column in ("finished", "worse", "alarm")
                             else "right", no_wrap=True)
        for look in looks:
            f, b = look.recheck["figures"], look.bound
            at = str(look.recheck["finished_at"])
            table.add_row(str(look.recheck["id"]), f"{at[5:10]} {at[11:16]}",
                          f"{_cell(f['kappa_before'], 2)}->{_cell(f['kappa_after'], 2)}",
                          _cell(f["kappa_drop"]), _cell(f["worse_p"]),
                          "yes" if f["worse"] else "no",
                          number(b.drop, 3) if b else "", number(b.lower, 3) if b else "",
                          ("yes" if b.alarm else "no") if b else "other baseline")
        from rich.console import Console

        Console(highlight=False).print(table)
        chunks = sorted({look.recheck["figures"]["chunks"] for look in looks})
        compared = f"{chunks[0]:,}" + (f" to {chunks[-1]:,}" if len(chunks) > 1 else "")
        _say(f"Each re-check compared {compared} canary chunks. kappa: before -> now; p: "
             "one-sided McNemar, '-' where no chunk moved between right and wrong. The bound is "
             "a lower bound on the drop in agreement (agr. drop: baseline minus the re-checks so "
             f"far) that holds at every re-check at once with probability {1 - alpha:g}; the "
             f"alarm sounds when it passes the tolerance, {tolerance:g} in kappa, "
             f"{number(in_agreement or 0, 3)} in agreement. "
             + ("Alarm: the judge has drifted." if alarm else "No alarm."))
    if alarm:
        sys.exit(1)


def _cell(stat: dict[str, Any], digits: int = 3) -> str:
    """A stored statistic as a cell: its value to ``digits`` places, or '-' where undefined."""
    from annotator.stats.stat import number

    return "-" if stat["value"] is None else number(stat["value"], digits)


def _print_recheck_plan(session: Session, name: str, drop: float, tolerance: float,
                        alpha: float, power: float, fmt: str) -> None:
    """How many canary chunks find a drop of ``drop`` in agreement."""
    from annotator.calibration.recheck import plan_canary

    plan = plan_canary(session, name, drop=drop, tolerance=tolerance, alpha=alpha, power=power)
    if fmt == "json":
        from dataclasses import asdict

        from annotator.jsonout import write_json

        write_json({"judge": name, "alpha": alpha, **asdict(plan)}, sys.stdout)
        return
    basis = (f"from {counted(plan.labelled, 'labelled chunk')}: {plan.prevalence:.0%} useful, "
             f"the judge's sensitivity {plan.sensitivity:.2f} and specificity "
             f"{plan.specificity:.2f}; its verdicts change between runs {plan.instability:.1%} of "
             f"the time, from {plan.instability_from}")
    if plan.chunks is None:
        _say(f"No canary of up to 100,000 chunks finds a drop of {drop:g} in agreement with "
             f"{power:.0%} power at tolerance {tolerance:g} ({basis}). A drop that small is "
             "within the judge's own noise or the tolerance: plan for a larger --drop, or "
             "lower --tolerance.")
        return
    _say(f"A canary of {plan.chunks:,} chunks finds a drop of {drop:g} in agreement in "
         f"{power:.0%} of re-checks (worse: kappa drop beyond {tolerance:g}, McNemar p < "
         f"{alpha:g}), {basis}; on goldens of {plan.per_golden} chunks, each chunk on its own "
         "(goldens whose chunks move together need more). Freeze one with 'annotator recheck "
         f"{session.where} --judge {name} --canary {plan.chunks}'.")


@cli.command("report")
@click.argument("session_path", metavar="SESSION", type=SESSION)
@click.option("--judge", "-j", help="Whose verdicts to check (default: the only judge).")
@click.option("--annotator", "-a", help="Whose labels are the truth (default: the only annotator).")
@click.option("--all-annotators", is_flag=True,
              help="Pool every annotator's labels (each person-golden pair counts; goldens are "
              "still the unit the bootstrap resamples).")
@click.option("--gold", is_flag=True,
              help="Score the judge against the team's gold labels: the adjudicated label where "
              "there is one, else the label everyone who labelled the chunk agrees on.")
@click.option("--format", "-f", "fmt", type=click.Choice(FORMATS), default="table",
              show_default=True, help="table: for the terminal; json: every number; markdown: for "
              "a pull request; html: one offline file with charts; csv: one row per chunk.")
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True),
              help="Write here instead of standard output.")
@click.option("--pass-mark", type=click.FloatRange(0, 1), default=0.7, show_default=True,
              help="The context precision a golden must reach.")
@click.option("--bootstrap", "resamples", type=click.IntRange(0), default=2000, show_default=True,
              help="Bootstrap resamples over goldens for the 95% intervals (0: none).")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the bootstrap: the same seed gives the same intervals.")
@click.option("--group-by", help="The metadata key naming each golden's system "
              "(default: retriever, when the goldens carry it).")
@click.option("--worst", type=click.IntRange(0), default=10, show_default=True,
              help="How many of the goldens with the largest CP difference to list.")
@click.option("--top-k", "top_k", is_flag=True,
              help="Add the cut to the first k chunks for every k (CP@k, P@k, relevant chunks "
              "lost, under both label sets) and the smallest k keeping --keep of them.")
@click.option("--keep", type=click.FloatRange(0, 1, min_open=True), default=0.95,
              show_default=True, help="--top-k: the share of relevant chunks a cut must keep.")
@click.option("--target-width", type=click.FloatRange(0, 1, min_open=True), default=0.03,
              show_default=True, help="The half-width on mean CP a sample aims at: the report "
              "says how many more goldens reach it.")
@click.option("--checks-min", type=click.FloatRange(0, 1), default=CHECKS_MIN, show_default=True,
              help="Warn of a person right on fewer attention checks than this.")
@click.option("--relevant-from", type=click.IntRange(1), default=None,
              help="On a graded session: the lowest relevant grade for CP and every binary "
                   "statistic (default: the session's, from import-trec).")
@_epoch_option
def report_command(session_path: str, judge: str | None, annotator: str | None,
                   all_annotators: bool, gold: bool, fmt: str, output: str | None, pass_mark: float,
                   resamples: int, seed: int, group_by: str | None, worst: int, top_k: bool,
                   keep: float, target_width: float, checks_min: float,
                   relevant_from: int | None, epochs: tuple[str, ...]) -> None:
    """Report how the judge agrees with people, chunk by chunk and golden by golden.

    Human labels are the truth and "relevant" is the positive class. Intervals come from a
    bootstrap over goldens (never over chunks), seeded and reproducible. An undefined number
    (kappa on one class, a correlation of constant values) is shown as undefined with its
    reason, never as 0 or 1.

    \b
    Examples:
      annotator report review.db
      annotator report review.db --format html --output report.html
      annotator report review.db --all-annotators --format json --group-by retriever
    """
    from annotator.errors import AnnotatorError
    from annotator.progress import counter

    if sum(map(bool, (annotator, all_annotators, gold))) > 1:
        raise click.UsageError("Give one of --annotator NAME, --all-annotators and --gold.")
    from annotator.report.epochs import epochs_given

    with _open(session_path, reads_only=True) as session, epochs_given(session, epochs):
        people = session.annotators()
        if annotator:
            from annotator.resolve import annotator_named

            annotator_named(people, annotator)
        names = [annotator] if annotator else people
        if not (annotator or all_annotators or gold) and len(names) > 1:
            raise AnnotatorError(f"The session has several annotators ({', '.join(names)}); "
                                 "choose one with --annotator NAME, pool them with "
                                 "--all-annotators, or score against the team's gold labels "
                                 "with --gold.")
        if fmt == "csv":
            from annotator.formats import write_chunk_csv
            from annotator.report.build import choose_judge

            chosen = choose_judge(session, judge)
            rows = _write_output(output, lambda out: write_chunk_csv(session.export_records(),
                                                                     out, chosen, names))
            if output is not None:
                _say(f"Wrote {counted(rows, 'chunk row')} of judge '{chosen}' to {output}.",
                     err=True)
            return
        from annotator.report.build import build_report

        with counter("Building the report (bootstrap over goldens)", unit="resamples",
                     total=resamples) as advance:
            report = build_report(session, judge=judge, annotators=names, pass_mark=pass_mark,
                                  resamples=resamples, seed=seed, group_by=group_by, worst=worst,
                                  gold=gold, top_k=top_k, keep_share=keep,
                                  target_width=target_width, checks_min=checks_min,
                                  relevant_from=relevant_from, progress=advance)
    from annotator.report.output import report_document

    _write_document(fmt, output, report_document(report))


def _write_document(fmt: str, output: str | None, document: Document) -> None:
    """Write a report or leaderboard in one format, to standard output or a file."""
    from annotator.progress import working
    from annotator.report.output import write

    with working(f"Writing the {fmt} {document.what}" + (" (drawing its charts)"
                                                         if fmt == "html" else "")):
        _write_output(output, lambda out: write(document, fmt, out))
    if output is not None:
        _say(f"Wrote the {fmt} {document.what} to {output}.", err=True)


def _write_output(output: str | None, write: Callable[[Any], Any]) -> Any:
    """Write to standard output, or to a file in one step (a stopped run leaves the old file)."""
    if output is None:
        return write(sys.stdout)
    from annotator.files import replaced_whole

    with replaced_whole(output) as out:
        return write(out)


@cli.command("sample")
@click.argument("session_path", metavar="SESSION", type=SESSION_EXISTS)
@click.option("--size", type=click.IntRange(1), required=True, help="Goldens (active: draws).")
@click.option("--design", type=click.Choice(DESIGNS), default="uniform", show_default=True,
              help="uniform: at random; stratified: by strata of the judge's CP (per system), "
              "Neyman-allocated; active: more often where the judge is expected to err.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--judge", "-j", help="Whose verdicts stratified and active draw from (default: "
              "the only judge).")
@click.option("--group-by", help="The metadata key naming each golden's system (default: "
              "retriever, when the goldens carry it).")
@click.option("--format", "-f", "fmt", type=click.Choice(["table", "json"]), default="table",
              show_default=True)
def sample_command(session_path: str, size: int, design: str, seed: int, judge: str | None,
                   group_by: str | None, fmt: str) -> None:
    """Draw the session's sample of goldens to label, store it, and list it in draw order.

    'annotator annotate SESSION --sample N --design D --seed S' opens the same sample; a
    different draw is refused once one is stored (the estimates need the sample kept).

    \b
    Example:
      annotator sample review.db --size 80 --design active --format json > to-label.json
    """
    import json

    from annotator.report.build import choose_judge
    from annotator.scoring.sampling import draw

    with _open(session_path) as session:
        chosen = choose_judge(session, judge) if design != "uniform" or judge else None
        sample = draw(session, size, design, seed, chosen, group_by)
        every = session.count_goldens()
    # A uniform sample gives every golden the same chance: its share of the goldens.
    probability: dict[str, float] = sample.get("probabilities") or dict.fromkeys(
        sample["golden_ids"], len(sample["golden_ids"]) / every)
    rows = [{"golden_id": g, "inclusion_probability": probability.get(g)}
            for g in sample["golden_ids"]]
    if fmt == "json":
        click.echo(json.dumps({"design": sample.get("design", "uniform"), "size": sample["size"],
                               "seed": sample["seed"], "judge": sample.get("judge"),
                               "goldens": rows}, indent=1, ensure_ascii=False))
        return
    _say(f"{counted(len(rows), 'golden')} drawn by the {sample.get('design', 'uniform')} "
         f"design (seed {sample['seed']}), in the order to label them:")
    for i, row in enumerate(rows, 1):
        p = row["inclusion_probability"]
        _say(f"{i:5d}  {row['golden_id']}" + (f"  (chance of being drawn {p:.3f})"
                                              if p is not None else ""))


@cli.command("trust")
@click.argument("session_path", metavar="SESSION", type=SESSION_EXISTS)
@click.option("--judge", "-j", required=True, help="The judge whose verdicts to keep or escalate.")
@click.option("--annotator", "-a", help="Whose labels are the truth (default: the team's).")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.1,
              show_default=True, help="The kept chunks are to agree with people at least "
              "1 - alpha of the time...")
@click.option("--delta", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.1,
              show_default=True, help="...with probability at least 1 - delta.")
@click.option("--then", "then", metavar="JUDGE", help="A stronger judge for what the first "
              "escalates: the cascade judge, then JUDGE, then people.")
@click.option("--person-cost", type=click.FloatRange(0), metavar="USD",
              help="What a person's label costs per chunk, for the cascade's cost.")
@click.option("--price", "prices", multiple=True, metavar="JUDGE=IN,OUT",
              help="A judge's price in USD per million tokens in and out (default: the price "
              "given to 'annotator judge').")
@click.option("--escalated", is_flag=True, help="List the chunks the stored threshold escalates "
              "(fit nothing).")
@click.option("--format", "-f", "fmt", type=click.Choice(["table", "json"]), default="table",
              show_default=True)
def trust_command(session_path: str, judge: str, annotator: str | None, alpha: float,
                  delta: float, then: str | None, person_cost: float | None,
                  prices: tuple[str, ...], escalated: bool, fmt: str) -> None:
    """Keep the judge's verdict only where it is confident enough; escalate the rest.

    Fits, on the dev split, the confidence above which the judge's verdicts agree with people
    at least 1 - alpha of the time with probability 1 - delta (fixed-sequence testing; the
    confidence is P(relevant) where the endpoint gave logprobs, else the agreement of repeated
    runs), evaluates it once on the test split, and stores it: 'annotator judge --trust' then
    says which new verdicts to escalate.

    \b
    Example:
      annotator trust review.db --judge gpt-4o-mini --alpha 0.1 --delta 0.1
      annotator trust review.db --judge gpt-4o-mini --then gpt-4o --person-cost 0.05
      annotator trust review.db --judge gpt-4o-mini --escalated
    """
    import json

    from annotator.calibration.trust import escalated as escalated_chunks
    from annotator.calibration.trust import fit_trust

    if escalated:
        with _open(session_path, reads_only=True) as session:
            chunks = escalated_chunks(session, judge)
        if fmt == "json":
            click.echo(json.dumps([{"golden_id": g, "rank": r} for g, r in chunks], indent=2,
                                  ensure_ascii=False))
            return
        _say(f"{counted(len(chunks), 'chunk')} of '{judge}' to escalate (below its stored "
             "threshold, or without a confidence):")
        for golden, rank in chunks:
            _say(f"  {golden}  rank {rank}")
        return
    with _open(session_path) as session:
        fitted = fit_trust(session, judge, annotator=annotator, alpha=alpha, delta=delta,
                           then=then, person_cost=person_cost, prices=_prices(prices))
    if fmt == "json":
        click.echo(json.dumps(_trust_dict(fitted), indent=2, ensure_ascii=False))
        return
    for line in _trust_lines(fitted, session_path):
        _say(line)


def _trusted_from(session: Session, judge: str) -> str:
    """The judge's stored trust threshold in a table cell ('-' without one)."""
    stored = session.trust_threshold(judge)
    if stored is None:
        return "-"
    target = f"{1 - stored['alpha']:.0%} agreement"
    if stored["threshold"] is None:
        return f"never ({target} out of reach)"
    return f"confidence {stored['threshold']:.2f} ({target})"


def _trust_dict(fitted: Any) -> dict[str, Any]:
    """A fitted trust threshold as JSON-ready data."""
    from annotator.report.jsonparts import stats_dict

    def kept(k: Any) -> dict[str, Any]:
        return {"chunks": k.chunks, "kept": k.kept, "coverage": k.coverage,
                **stats_dict({"agreement": k.agreement})}

    def fit(f: Any) -> dict[str, Any]:
        return {"threshold": f.threshold, "chunks": f.chunks, "kept": f.kept,
                "disagreements": f.disagreements, "p_value": f.p_value,
                "stopped_at": f.stopped_at}

    out = {"judge": fitted.judge, "truth": fitted.truth, "confidence": fitted.confidence,
           "alpha": fitted.fit.alpha, "delta": fitted.fit.delta, "target": fitted.target,
           "dev": fit(fitted.fit), "test": kept(fitted.test),
           **stats_dict({"cost_per_1000_chunks": fitted.cost_per_1000}), "stored": fitted.stored}
    if fitted.cascade is not None:
        c = fitted.cascade
        out["cascade"] = {"then": c.then, "confidence": c.confidence, "dev": fit(c.fit),
                          "test": kept(c.automated), "to_people": c.to_people,
                          **stats_dict({"cost_per_1000_chunks": c.cost_per_1000})}
    return out


def _usd(cost: Any) -> str:
    """A cost in dollars, or why there is none."""
    return f"${cost.value:.4f}" if cost.value is not None else f"unknown ({cost.reason})"


def _trust_lines(fitted: Any, session_path: str) -> list[str]:
    """A fitted trust threshold in sentences."""
    fit, test = fitted.fit, fitted.test
    confidence = {"logprobs": "P(relevant) of its verdict",
                  "runs": "the share of its repeated runs that agree"}[fitted.confidence]
    target = (f"agreement with {fitted.truth} of at least {fitted.target:.0%} on the chunks "
              f"it keeps, with probability {1 - fit.delta:.0%}")
    if fit.threshold is None:
        lines = [f"No threshold on the confidence of '{fitted.judge}' ({confidence}) reaches "
                 f"{target}, on the {counted(fit.chunks, 'dev chunk')}: escalate every "
                 "verdict, or label more dev goldens and fit again."]
    else:
        lines = [f"'{fitted.judge}' keeps its verdict where its confidence ({confidence}) is at "
                 f"least {fit.threshold:.2f}: fitted on {counted(fit.chunks, 'dev chunk')} "
                 f"({fit.kept:,} kept, {fit.disagreements:,} disagreeing) for {target}."]
    if test.chunks:
        agreement = test.agreement
        lines.append(
            f"On the test split, judged once: it keeps {test.kept:,} of "
            f"{counted(test.chunks, 'chunk')} (coverage {test.coverage:.0%}); agreement on them "
            + agreement.format(3, interval=True)
            + ("" if agreement.value is None else
               f", {'at or above' if agreement.value >= fitted.target else 'below'} the target "
               f"{fitted.target:.0%}") + ".")
    else:
        lines.append("The test split has no chunk labelled and judged with a confidence: the "
                     "threshold is not checked yet.")
    lines.append(f"The judge's cost per 1,000 chunks: {_usd(fitted.cost_per_1000)}.")
    if (c := fitted.cascade) is not None:
        second = ("escalates everything" if c.fit.threshold is None else
                  f"keeps its verdict from confidence {c.fit.threshold:.2f}")
        lines.append(
            f"Cascade '{fitted.judge}' -> '{c.then}' -> people: '{c.then}' {second} (fitted on "
            f"{counted(c.fit.chunks, 'dev chunk')} the first escalates). On the test split the "
            f"judges keep {c.automated.kept:,} of {c.automated.chunks:,} chunks, agreement "
            f"{c.automated.agreement.format(3, interval=True)}; people label "
            f"{c.to_people:,}. The cascade's cost per 1,000 chunks: {_usd(c.cost_per_1000)}.")
    if fitted.stored is not None:
        lines.append(f"Stored: 'annotator judge {session_path} ... --name {fitted.judge} "
                     "--trust' says which new verdicts to escalate; 'annotator trust "
                     f"{session_path} --judge {fitted.judge} --escalated' lists them.")
    return lines


@cli.command("guidelines")
@click.argument("session_path", metavar="SESSION", type=SESSION_EXISTS)
@click.argument("action", type=click.Choice(["set", "show", "list"]))
@click.argument("file", required=False, type=click.Path(dir_okay=False))
@click.option("--version", "version", type=click.IntRange(min=1),
              help="With show: this version instead of the one in force.")
@click.option("--by", help="With set: who sets them (default: your login name).")
def guidelines_command(session_path: str, action: str, file: str | None, version: int | None,
                       by: str | None) -> None:
    """Set, show or list the team's labelling guidelines (a Markdown file).

    'set FILE.md' stores the file whole as a new version. Each person's screen shows it
    before their next golden (and on the i key); every label records the version its person
    had been shown. 'show' prints the version in force (or --version N), 'list' every version with the
    labels made under it.

    \b
    Examples:
      annotator guidelines team.db set guidelines.md
      annotator guidelines team.db show --version 1
      annotator guidelines team.db list
    """
    from annotator.people.guidelines import read_file

    if action == "set":
        if file is None:
            raise click.UsageError("'set' needs the guidelines file: "
                                   f"annotator guidelines {_hint_word(session_path)} set FILE.md")
        text = read_file(file)
        with _open(session_path) as session:
            number, new = session.set_guidelines(text, source=file, by=by or _login_name())
        _say(f"Guidelines version {number} stored from {file} ({len(text):,} characters). "
             "Each person's screen shows it before their next golden, and their labels record "
             "it from then on." if new else
             f"{file} is the text of version {number}, already in force; nothing changed.")
        return
    if file is not None:
        raise click.UsageError(f"'{action}' takes no file.")
    with _open(session_path, reads_only=True) as session:
        versions = session.guidelines()
        counts = session.guideline_counts() if action == "list" else {}
    if not versions:
        _say(f"{session_path} has no guidelines yet; set them with 'annotator guidelines "
             f"{session_path} set FILE.md'.")
        return
    if action == "list":
        for g in versions:
            _say(f"version {g.version}  set {g.set_at[:16].replace('T', ' ')}"
                 f"{f' by {g.set_by}' if g.set_by else ''}  from {g.source or '-'}  "
                 f"sha256 {g.sha256[:12]}  {counted(counts.get(g.version, 0), 'label')}")
        if counts.get(None):
            _say(f"{counted(counts[None], 'label')} were made before any guidelines.")
        return
    shown = versions[-1] if version is None else next(
        (g for g in versions if g.version == version), None)
    if shown is None:
        raise click.BadParameter(f"there is no version {version}; the session has versions "
                                 f"1 to {versions[-1].version}.", param_hint="--version")
    click.echo(visible(shown.text), nl=not shown.text.endswith("\n"))


@cli.command("plan")
@click.argument("session_path", metavar="SESSION", type=SESSION_EXISTS)
@click.option("--judge", "-j", help="Whose verdicts to plan from (default: the only judge).")
@click.option("--target-width", type=click.FloatRange(0, 1, min_open=True), default=0.03,
              show_default=True, help="The 95% half-width on mean CP to reach.")
@click.option("--group-by", help="The metadata key naming each golden's system.")
def plan_command(session_path: str, judge: str | None, target_width: float,
                 group_by: str | None) -> None:
    """Say how many goldens each sampling design needs before anyone starts labelling.

    From the judge's expected error on each golden (its P(relevant), else its disagreement
    with other judges); once people have labelled twenty goldens or more, rescaled to what
    they found. Reads the session only.
    """
    from annotator.report.build import choose_judge
    from annotator.scoring.sampling import CALIBRATE_FROM, plan

    with _open(session_path, reads_only=True) as session:
        chosen = choose_judge(session, judge)
        planned = plan(session, chosen, target_width, group_by)
    _say(f"Goldens to label for mean CP within +-{target_width:g} (95%), judge '{chosen}', "
         f"{counted(planned.goldens, 'golden')} judged whole:")
    best = min(planned.sizes.values())
    for design, n in planned.sizes.items():
        note = ("  (every golden; the target may be out of reach)" if n >= planned.goldens
                else "  (fewest)" if n == best else "")
        _say(f"  {design:10s} {n:7,}{note}")
    if planned.calibrated_on:
        _say(f"Expected error from {planned.source}, rescaled to what people found on "
             f"{planned.calibrated_on} labelled goldens.")
    else:
        # Before people's labels the sizes are only as good as the judge's confidence: a
        # judge sure of random verdicts made them about a tenth short (tests/test_designs.py).
        _say(f"Expected error from {planned.source}. Until people have labelled "
             f"{CALIBRATE_FROM} goldens these sizes take the judge at its word (one sure of "
             "random verdicts makes them about a tenth short); then run this again: it "
             "rescales them to what people found.")
    _say("Active leans on the judge's confidence: where that is miscalibrated (the report's "
         f"ECE), prefer stratified. Draw with 'annotator sample {session_path} --size N "
         "--design D'.")


@cli.command("judges")
@click.argument("session_path", metavar="SESSION", type=SESSION)
@click.option("--annotator", "-a", help="Whose labels are the truth (default: the only annotator).")
@click.option("--judge", "-j", "judges", multiple=True,
              help="Score only these judges (repeat the option; default: every judge).")
@click.option("--sort", type=click.Choice(SORT_KEYS),
              default="cohen_kappa", show_default=True, help="What to rank the judges by.")
@click.option("--format", "-f", "fmt", type=click.Choice(FORMATS), default="table",
              show_default=True)
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True),
              help="Write here instead of standard output.")
@click.option("--split", type=click.Choice(["test", "dev", "all"]),
              help="Which goldens to score on (default: test when the session has a split, "
              "else all).")
@click.option("--price", "prices", multiple=True, metavar="JUDGE=IN,OUT",
              help="A judge's price in USD per million tokens in and out, for the cost column "
              "(default: the price given to 'annotator judge').")
@click.option("--bootstrap", "resamples", type=click.IntRange(0), default=2000, show_default=True,
              help="Bootstrap resamples over goldens, shared by every judge (0: none).")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--group-by", help="The metadata key naming each golden's system (default: "
              "retriever, when the goldens carry it): the systems' ranking columns ask whether a "
              "judge ranks them as people do.")
@click.option("--all-pairs", is_flag=True,
              help="Show every pair of judges in the table, Markdown and HTML: the whole "
                   "judge-against-judge matrix and every pair tested (by default, past "
                   f"{MATRIX_UP_TO} judges, the most and least alike pairs, and only the pairs "
                   "a test separates). JSON and CSV always hold every pair.")
@click.option("--epsilon", type=click.FloatRange(0, 1), default=EPSILON, show_default=True,
              help="The alternative annotator test's cost-benefit margin: how far a person may "
                   "be ahead of the judge and the judge still replace them (the paper's advice: "
                   "0.2 for experts, 0.15 for skilled annotators, 0.1 for crowd workers).")
@click.option("--alt-alpha", type=click.FloatRange(0, 1, min_open=True), default=ALT_ALPHA,
              show_default=True, help="The alternative annotator test's false discovery rate "
                                      "(Benjamini-Yekutieli over the people held out).")
@_epoch_option
def judges_command(session_path: str, annotator: str | None, judges: tuple[str, ...], sort: str,
                   fmt: str, output: str | None, split: str | None, prices: tuple[str, ...],
                   resamples: int, seed: int, group_by: str | None, all_pairs: bool,
                   epsilon: float, alt_alpha: float, epochs: tuple[str, ...]) -> None:
    """Rank every judge in the session on the same human labels.

    The truth is one person's labels with --annotator; otherwise the team's: the adjudicated
    gold label where there is one, else the label everyone who labelled a chunk agrees on.
    Every judge is scored on the same chunks and goldens; intervals come from one bootstrap
    over goldens shared by all of them, and a cluster-adjusted McNemar test, Holm-corrected
    over all pairs, says which gaps are real. A judge is named best only when it beats every
    other one significantly. With two people or more on the same chunks, the alternative
    annotator test says whether each judge can replace a person.

    \b
    Example:
      annotator judges review.db --annotator alice
      annotator judges review.db --split test --price gpt-4o-mini=0.15,0.6
      annotator judges review.db --format html --output judges.html
    """
    from annotator.progress import counter
    from annotator.report.epochs import epochs_given
    from annotator.report.leaderboard import build_leaderboard

    with _open(session_path, reads_only=True) as session, epochs_given(session, epochs), \
            counter("Scoring judges (bootstrap over goldens)", unit="resamples",
                    total=resamples) as advance:
        board = build_leaderboard(session, annotator=annotator, judges=judges or None,
                                  split=split, prices=_prices(prices), resamples=resamples,
                                  seed=seed, sort=sort, group_by=group_by, epsilon=epsilon,
                                  alt_alpha=alt_alpha, progress=advance)
    from dataclasses import replace

    from annotator.report.output import leaderboard_document

    board = replace(board, all_pairs=all_pairs)
    _write_document(fmt, output, leaderboard_document(board))


@cli.command("align")
@click.argument("session_path", metavar="SESSION", type=SESSION)
@click.option("--judge", "-j", required=True, help="The judge whose prompt to improve (its "
              "model and endpoint judge the candidates).")
@click.option("--optimizer-model", required=True, help="The model that proposes revised prompts.")
@click.option("--base-url", envvar="OPENAI_BASE_URL", help="The optimizer's endpoint (default: "
              "$OPENAI_BASE_URL, else the judge's own).")
@click.option("--optimizer-provider", type=click.Choice(list(PROVIDERS)),
              help="Whose API the optimizer's endpoint speaks (default: the judge's provider).")
@click.option("--rounds", type=click.IntRange(1, 20), default=1, show_default=True,
              help="Rounds of revision, each from the best prompt so far.")
@click.option("--candidates", type=click.IntRange(1, 50), default=3, show_default=True,
              help="Candidate prompts asked for in each round.")
@click.option("--sample", type=click.IntRange(1, 200), default=12, show_default=True,
              help="Disagreements shown in one optimizer request.")
@click.option("--validation", type=click.FloatRange(0.1, 0.9), default=0.5, show_default=True,
              help="The share of the labelled dev goldens candidates are scored on; the "
              "optimizer sees the others' disagreements only.")
@click.option("--annotator", "-a", help="Whose labels are the truth (default: the team's).")
@click.option("--instructions", type=click.Path(dir_okay=False), help="A team's vetted "
              "instructions, one a line: the optimizer may only add or remove them (by number), "
              "never write its own.")
@click.option("--budget", type=click.FloatRange(min=0, min_open=True), help="Stop before a step "
              "that would take the run past this many USD (needs both prices).")
@click.option("--max-calls", type=click.IntRange(1), help="Stop before a step that would take "
              "the run past this many requests (optimizer and judge together).")
@click.option("--price-in", type=float, help="The optimizer's USD per million prompt tokens.")
@click.option("--price-out", type=float, help="The optimizer's USD per million completion "
              "tokens.")
@click.option("--judge-price", metavar="IN,OUT", help="The judge's USD per million tokens in and "
              "out (default: the price given to 'annotator judge').")
@click.option("--out-dir", type=click.Path(file_okay=False), help="Where a kept prompt file is "
              "written (default: beside the session file).")
@click.option("--bootstrap", "resamples", type=click.IntRange(0), default=2000, show_default=True,
              help="Bootstrap resamples of the test comparison.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the train/validation cut, the samples and the bootstrap.")
@click.option("--dry-run", is_flag=True, help="Print the calls, tokens and cost the run may "
              "take, and send nothing.")
@click.option("--system-as-user/--no-system-as-user", default=None, help="Put the optimizer's "
              "instructions in its user message, for a chat template that drops system messages "
              "(default: as the judge does, when the optimizer is the judge's endpoint).")
@_sending_options
@_stops_on_signals
def align_command(session_path: str, judge: str, optimizer_model: str, base_url: str | None,
                  optimizer_provider: str | None, rounds: int, candidates: int, sample: int,
                  validation: float, annotator: str | None, instructions: str | None, budget: float | None,
                  max_calls: int | None, price_in: float | None, price_out: float | None,
                  judge_price: str | None, out_dir: str | None, resamples: int, seed: int,
                  dry_run: bool, system_as_user: bool | None, concurrency: int,
                  rpm: float | None, tpm: float | None, timeout: float | None, max_retries: int,
                  max_wait: float) -> None:
    """Propose better prompts for a judge from the dev split; keep one only if the test split says so.

    The labelled dev goldens are cut in two: an optimizer model sees the judge's disagreements
    with people on one part (looser: the judge said useful, people noise; stricter: the
    reverse) and proposes revised prompts; each is judged on the other part. The best
    candidate alone is judged once on the test split and compared with the judge by the
    leaderboard's paired bootstrap: it is kept, as NAME-aligned-K.toml and judge
    NAME-aligned-K, only when its kappa is higher with the interval above 0. Every request,
    reply and candidate is stored ('annotator align-log').

    \b
    Example:
      annotator align team.db --judge gpt-4o-mini-builtin --optimizer-model gpt-4o --dry-run
      annotator align team.db --judge gpt-4o-mini-builtin --optimizer-model gpt-4o \\
        --rounds 2 --candidates 4 --budget 2 --price-in 2.5 --price-out 10
    """
    import asyncio

    from annotator.align import loop, optimizer
    from annotator.judge.client import LOCAL_KEY
    from annotator.judge.runner import JudgeStopped, RunOptions
    from annotator.judge.transport import connect
    from annotator.models import Price
    from annotator.progress import judging
    from annotator.redact import without_credentials

    options = loop.AlignOptions(
        judge=judge, optimizer_model=optimizer_model, rounds=rounds, candidates=candidates,
        sample=sample, validation=validation, seed=seed, annotator=annotator,
        instructions=optimizer.read_instructions(instructions) if instructions else None,
        max_calls=max_calls, budget=budget,
        optimizer_price=Price(price_in, price_out) if price_in is not None and
        price_out is not None else None,
        out_dir=Path(out_dir) if out_dir else Path(session_path).resolve().parent,
        resamples=resamples,
        run=RunOptions(concurrency=concurrency, timeout=timeout, max_retries=max_retries,
                       max_wait=max_wait))
    with _open(session_path, create=False) as session:  # read only, before anything is sent
        prepared = loop.prepare(session, options)
        options.judge_price = (next(iter(_prices((f"{judge}={judge_price}",)).values()))
                               if judge_price else session.price(judge))
        if budget is not None and (options.judge_price is None or options.optimizer_price is None):
            raise click.UsageError("--budget needs the optimizer's price (--price-in, --price-out) "
                                   "and the judge's (--judge-price, or the price given to "
                                   "'annotator judge'); or cap the run with --max-calls.")
        if dry_run:
            _print_align_plan(loop.plan(session, options, prepared), options, prepared)
            return
    optimizer_url = base_url or prepared.settings.base_url
    options.optimizer_url = without_credentials(optimizer_url)[0]
    judge_url = prepared.settings.base_url
    options.optimizer_system_as_user = (system_as_user if system_as_user is not None else
                                        prepared.settings.system_as_user
                                        and optimizer_url == judge_url)
    judge_provider = prepared.settings.provider
    optimizer_provider = optimizer_provider or judge_provider
    judge_key = _api_key(judge_url, judge_provider)
    optimizer_key = _api_key(optimizer_url, optimizer_provider)
    secrets = tuple(k for k in (judge_key, optimizer_key) if k != LOCAL_KEY)

    async def run(session: Session, show: Callable[[Any], None]) -> loop.AlignResult:
        async with connect(judge_provider, judge_url, judge_key, concurrency=concurrency,
                           rpm=rpm, tpm=tpm) as judge_client:
            if (optimizer_url, optimizer_key, optimizer_provider) == (
                    judge_url, judge_key, judge_provider):
                optimizer_client = judge_client  # one endpoint: one client, one limiter
                return await loop.align(session, options, prepared, judge_client,
                                        optimizer_client, say=lambda t: _say(t, err=True),
                                        show=show)
            async with connect(optimizer_provider, optimizer_url, optimizer_key,
                               concurrency=concurrency, rpm=rpm, tpm=tpm) as optimizer_client:
                return await loop.align(session, options, prepared, judge_client,
                                        optimizer_client, say=lambda t: _say(t, err=True),
                                        show=show)

    with _open(session_path) as session, judging(f"align {judge}", options.judge_price) as show:
        try:
            result = asyncio.run(run(session, show))
        except KeyboardInterrupt:
            _say("Stopped. Nothing was registered; the run's record is kept ('annotator "
                 f"align-log {session_path}').", err=True)
            sys.exit(130)
        except (loop.AlignStopped, JudgeStopped) as error:
            _say(f"Error: {_redacted(str(error), secrets)} Nothing was registered.", err=True)
            sys.exit(1)
    spent = result.spent
    _say(f"Align run {result.run_id}: {counted(result.candidates, 'candidate')} asked for, "
         f"{result.rejected:,} rejected; validation kappa of '{judge}' "
         f"{'undefined' if result.incumbent_kappa is None else f'{result.incumbent_kappa:.3f}'}"
         + (f", of the best candidate {result.best.kappa:.3f}" if result.best is not None
            and result.best.kappa is not None else "")
         + f". {counted(spent.calls, 'request')}, {spent.tokens_in:,} tokens in, "
         f"{spent.tokens_out:,} out" + (f", ${spent.cost:.4f}" if options.judge_price is not None
                                        and options.optimizer_price is not None else "") + ".")
    _say(_redacted(result.sentence, secrets))
    if result.outcome == "kept":
        _say(f"Compare it with every judge: 'annotator judges {session_path}'.")


def _redacted(text: str, secrets: tuple[str, ...]) -> str:
    from annotator.redact import remember, scrub

    remember(*secrets)
    return scrub(text)


def _print_align_plan(plan: Any, options: Any, prepared: Any) -> None:
    """Print what an align run may send and cost; send nothing."""
    def cost(value: float, priced: bool) -> str:
        return f"${value:,.4f}" if priced else "give the prices to see it"

    optimizer_priced = options.optimizer_price is not None
    judge_priced = options.judge_price is not None
    rows = [
        ("judge", f"{options.judge} ({prepared.settings.model})"),
        ("goldens", f"{len(prepared.train):,} train (the optimizer sees their disagreements), "
         f"{len(prepared.validation):,} validation, {len(prepared.test):,} test"),
        ("optimizer", f"{counted(plan.optimizer.calls, 'request')} to {options.optimizer_model}, "
         f"about {plan.optimizer.tokens_in:,} tokens in, at most {plan.optimizer.tokens_out:,} "
         f"out; {cost(plan.optimizer.cost, optimizer_priced)}"),
        ("judging", f"at most {counted(plan.judging.calls, 'request')} ({plan.validation_chunks:,} "
         f"validation chunks a candidate, {plan.train_chunks:,} train chunks a later round, "
         f"{plan.test_chunks:,} test chunks once), about {plan.judging.tokens_in:,} tokens in, "
         f"{plan.judging.tokens_out:,} out; {cost(plan.judging.cost, judge_priced)}"),
        ("in all", f"at most {counted(plan.total.calls, 'request')}; "
         f"{cost(plan.total.cost, plan.priced)}"),
    ]
    width = max(len(k) for k, _ in rows)
    for key, text in rows:
        _say(f"{key.ljust(width)}  {text}")
    _say("Nothing was sent (--dry-run).")


@cli.command("align-log")
@click.argument("session_path", metavar="SESSION", type=SESSION)
@click.option("--run", "run_id", type=int, help="One run's candidates, with their prompts' "
              "rationales and why any was rejected (default: every run, one line each).")
def align_log_command(session_path: str, run_id: int | None) -> None:
    """Every align run of a session: what it tried, what it cost, what the test split said."""
    with _open(session_path, reads_only=True) as session:
        runs = session.align_runs()
        if run_id is not None:
            chosen = [r for r in runs if r["id"] == run_id]
            if not chosen:
                raise click.BadParameter(f"there is no align run {run_id} in {session_path}",
                                         param_hint="--run")
            candidates = session.align_candidates(run_id)
    if not runs:
        _say(f"No align run in {session_path} yet: 'annotator align {session_path} --judge J "
             "--optimizer-model M'.")
        return
    if run_id is None:
        for run in runs:
            _say(_align_run_line(run))
        return
    _say(_align_run_line(chosen[0]))
    for c in candidates:
        score = ("" if c["validation_kappa"] is None
                 else f", validation kappa {c['validation_kappa']:.3f} on "
                 f"{counted(c['validation_chunks'], 'chunk')}")
        what = f"rejected: {c['error']}" if c["error"] else (c["rationale"] or "no rationale")
        _say(f"  round {c['round']}, candidate {c['number']}{score}: {visible(what)}")


def _align_run_line(run: dict[str, Any]) -> str:
    """One align run in a sentence."""
    test = ("" if run["test_difference"] is None else
            f"; test: {run['test_kappa']:.3f} against {run['incumbent_test_kappa']:.3f} on "
            f"{counted(run['test_chunks'], 'chunk')}, difference {run['test_difference']:+.3f} "
            f"(95% CI {run['test_low']:+.3f} to {run['test_high']:+.3f})"
            if run["test_low"] is not None else
            f"; test difference {run['test_difference']:+.3f} (no interval)")
    kept = f", registered as '{run['registered_as']}'" if run["registered_as"] else ""
    cost = f", ${run['cost']:.4f}" if run["cost"] is not None else ""
    return (f"Run {run['id']} ({run['started_at'][:16]}): judge '{run['judge']}' on "
            f"{run['model']}, optimizer {run['optimizer_model']}: {run['outcome'] or 'unfinished'}"
            f"{kept}{test}; {counted(run['calls'], 'request')}{cost}.")


def _prices(given: tuple[str, ...]) -> dict[str, Price]:
    """--price JUDGE=IN,OUT[,CACHED] options as judge -> Price (USD per million tokens)."""
    from annotator.models import Price

    out = {}
    for item in given:
        name, _, numbers = item.rpartition("=")
        try:
            values = [float(p) for p in numbers.split(",")]
            if len(values) not in (2, 3):
                raise ValueError
        except ValueError:
            raise click.BadParameter(f"'{item}' is not JUDGE=IN,OUT[,CACHED] (USD per million "
                                     "prompt, completion and cached prompt tokens, e.g. "
                                     "gpt-4o-mini=0.15,0.6,0.075)", param_hint="--price") from None
        if not name:
            raise click.BadParameter(f"'{item}' names no judge; write JUDGE=IN,OUT[,CACHED]",
                                     param_hint="--price")
        out[name] = Price(*values)
    return out


@cli.command("batches")
@click.argument("session_path", metavar="SESSION", type=SESSION)
@click.option("--judge", "-j", help="Only this judge's batches.")
@click.option("--base-url", help="The endpoint the batches were created at (default: the one "
              "each judge was run with, else $OPENAI_BASE_URL).")
@click.option("--wait", is_flag=True, help="Poll until every batch has ended, storing results.")
@click.option("--cancel", is_flag=True, help="Cancel every batch still running.")
@click.option("--poll", type=click.FloatRange(min=0, min_open=True), default=10.0,
              show_default=True, help="Seconds between the first polls (growing to --poll-max).")
@click.option("--poll-max", type=click.FloatRange(min=0, min_open=True), default=60.0,
              show_default=True, help="The longest wait between polls.")
@_stops_on_signals
def batches_command(session_path: str, judge: str | None, base_url: str | None, wait: bool,
                    cancel: bool, poll: float, poll_max: float) -> None:
    """List a session's batches, store the results of those that ended, or wait for all.

    Each judge's batches are followed at the endpoint that judge was run with (--base-url
    overrides it). Stop it at any point and run it again: each result is stored once, and
    requests that failed or expired go into the next 'annotator judge --batch'.

    \b
    Example:
      annotator batches review.db --wait
    """
    import asyncio
    import os

    from annotator.judge.batch import Followed, describe, follow
    from annotator.judge.batch import cancel as cancel_batches
    from annotator.judge.transport import connect, provider_of
    from annotator.progress import batches_progress
    from annotator.redact import without_credentials

    with _open(session_path, create=False) as session:
        if not session.batches(judge) and not session.unsubmitted_parts(judge):
            _say("This session has no batches yet: create them with 'annotator judge SESSION "
                 "--model M --batch'.")
            return
        open_judges = sorted({b["judge"] for b in session.batches(judge) if not b["collected"]
                              and not b["id"].startswith("export:")}
                             | {j for j, _, _ in session.unsubmitted_parts(judge)})
        defined = {j.name: j for j in session.judges()}
        stored_urls = {name: j.base_url for name, j in defined.items()}
        providers = {name: j.provider for name, j in defined.items()}
        # The endpoint a judge's batches live at: the one it was run with, unless told otherwise.
        endpoints = {name: base_url or stored_urls.get(name)
                     or os.environ.get(provider_of(providers[name]).url_env)
                     for name in open_judges}
        keys = {name: _api_key(url, providers[name]) for name, url in endpoints.items()}
        for name in open_judges:
            shown = without_credentials(endpoints[name]
                                        or provider_of(providers[name]).default_url)[0]
            _say(f"Following judge '{name}' at {shown}"
                 + (" (given by --base-url)." if base_url else " (where it was run)."
                    if stored_urls.get(name) else "."), err=True)

        async def go(show: Callable[[Followed], None]) -> Followed:
            stored = repeated = 0
            for name in open_judges:
                async with connect(providers[name], endpoints[name], keys[name]) as client:
                    try:
                        if cancel:
                            cancelled = await cancel_batches(client, session, name)
                            _say(f"Cancelling {counted(len(cancelled), 'batch', 'batches')} of "
                                 f"'{name}'; what they finished is stored when they end.")
                        followed = await follow(client, session, name, wait=wait, poll=poll,
                                                poll_cap=poll_max, on_progress=show)
                    except Exception as error:
                        raise _endpoint_error(error, name, endpoints[name]) from None
                stored += followed.stored
                repeated += followed.repeated
            return Followed([b for b in session.batches(judge)
                             if not b["id"].startswith("export:")], stored, repeated)

        try:
            with batches_progress() as show:
                followed = asyncio.run(go(show)) if open_judges else Followed([])
        except KeyboardInterrupt:
            _say("Stopped. Every result stored so far is kept; run the same command to go on.",
                 err=True)
            sys.exit(130)
        for line in describe(session.batches(judge)):
            _say(visible(line))
        exported = [b for b in session.batches(judge) if b["state"] == "exported"]
        if exported:
            _say(f"{counted(len(exported), 'request file')} written for an offline engine: "
                 f"store its results with 'annotator import-results'.")
        _say(f"{counted(followed.stored, 'call')} stored this time"
             + (f" ({counted(followed.repeated, 'repeated result')} skipped: stored before)"
                if followed.repeated else "")
             + ("" if not followed.running else
                f"; {counted(len(followed.running), 'batch', 'batches')} still running "
                "(--wait to follow them)") + ".")


def _endpoint_error(error: Exception, judge: str, url: str | None, *,
                    following: bool = True) -> Exception:
    """A sentence for a failure talking to a batch endpoint (which URL, what it said), or the
    error itself when it is none of the client's. Not ``following``: while creating batches."""
    from annotator.errors import AnnotatorError
    from annotator.judge.transport import sdk_errors
    from annotator.redact import without_credentials

    shown = without_credentials(url or "the provider's API")[0]
    doing = (f"to follow the batches of judge '{judge}'" if following
             else f"to create the batches of judge '{judge}'")
    connection, status = sdk_errors()
    if isinstance(error, connection):
        return AnnotatorError(
            f"Could not reach {shown} {doing} ({error.__class__.__name__}). Check that the "
            "server is running and the URL is right" + (
                ", or give the endpoint the batches were created at with --base-url."
                if following else "."))
    code = getattr(error, "status_code", None)
    request = getattr(error, "request", None)  # both SDKs' errors carry the request they sent
    if not following and isinstance(error, status) and code in (404, 405, 501):
        return AnnotatorError(
            f"{shown} has no Batch API (HTTP {code} on "
            f"{request.url.path if request is not None else 'its batch path'}): "
            "most local servers (llama.cpp, Ollama, vLLM's server) offer none. Nothing was "
            "sent. Judge live (without --batch), or write the requests for an offline engine "
            "with --export-requests FILE.")
    if isinstance(error, status):
        return AnnotatorError(
            f"{shown} answered HTTP {code} {doing}: "
            f"{visible(str(getattr(error, 'message', error)))[:300]}. Check the key and the "
            "URL (--base-url)"
            + (" the batches were created with." if following else "."))
    return error


@cli.command("import-results")
@click.argument("session_path", metavar="SESSION", type=SESSION)
@click.argument("results", nargs=-1, required=True, type=click.Path(exists=True))
@_stops_on_signals
def import_results_command(session_path: str, results: tuple[str, ...]) -> None:
    """Store Batch API results files made anywhere (vllm run-batch, a Ray job, a provider's
    output file) for requests written by 'annotator judge --export-requests'.

    Give files, or folders whose .jsonl (or .parquet) files are the results of shards; a
    parquet file's rows are results as its JSON lines would be. Each file is stored
    whole or not at all: a line that is not JSON, or names no request of this session, is a
    sentence naming the file and line, and nothing of that file is stored. A result stored
    before (a file given twice, a rerun) is skipped and counted.
    """
    from annotator.judge.batch import result_lines, store_results

    files = [f for given in map(Path, results)
             for f in (sorted([*given.glob("*.jsonl"), *given.glob("*.parquet")])
                       if given.is_dir() else [given])]
    if not files:
        raise click.UsageError(f"No .jsonl or .parquet file in {', '.join(results)}: give the "
                               "results files, or the folder that holds them.")
    calls = read = repeated = 0
    with _open(session_path, create=False) as session:
        for path in files:

            with session.transaction():
                done = store_results(session, result_lines(path), path)
                for row in session.batches():
                    if row["id"].startswith("export:") and row["state"] == "exported":
                        session.record_batch({**row, "state": "imported"})
            calls, read, repeated = calls + done.calls, read + done.results, repeated + done.repeated
            if len(files) > 1:
                _say(f"{path}: {counted(done.results, 'result')}, {counted(done.calls, 'call')} "
                     "stored.")
    where = files[0] if len(files) == 1 else f"{counted(len(files), 'file')}"
    _say(f"{counted(read, 'result')} read from {where}; {counted(calls, 'call')} "
         "stored" + (f"; {counted(repeated, 'repeated result')} skipped (stored before, or "
                     "given twice)" if repeated else "") + ".")


@cli.group("prompts", invoke_without_command=True)
@click.pass_context
def prompts_command(ctx: click.Context) -> None:
    """List the builtin prompt styles; 'show' one as a prompt file, 'check' a file of yours.

    \b
    Example:
      annotator prompts show builtin > mine.toml
      annotator prompts check mine.toml
      annotator judge review.db --model gpt-4o-mini --prompt-file mine.toml
    """
    if ctx.invoked_subcommand is not None:
        return
    from annotator.judge.styles import STYLE_WORDS

    for style in PROMPTS:
        _say(f"{style.ljust(10)} {STYLE_WORDS[style]}")
    _say("Write your own with 'annotator prompts show builtin > mine.toml' and judge with "
         "--prompt-file mine.toml.")


@prompts_command.command("show")
@click.argument("style", type=click.Choice(list(PROMPTS)))
@click.option("--against", type=click.Choice(["reference", "response"]), default="reference",
              show_default=True)
def prompts_show(style: str, against: str) -> None:
    """Print a builtin style as a prompt file, to edit and judge with --prompt-file."""
    from annotator.judge.prompt_file import dump
    from annotator.judge.styles import make_prompt
    from annotator.judge.template import TemplatePrompt

    prompt = make_prompt(style, "reference" if against == "reference" else "response")
    if not isinstance(prompt, TemplatePrompt):
        raise click.UsageError(f"The {style} prompt is its library's own, sent exactly as the "
                               "library sends it; it has no template to show. Start from "
                               "'annotator prompts show builtin'.")
    click.echo(dump(prompt), nl=False)


@prompts_command.command("check")
@click.argument("path", type=click.Path(dir_okay=False))
def prompts_check(path: str) -> None:
    """Check a prompt file and print the request it makes for an example chunk."""
    import json

    from annotator.judge.prompt_file import PromptFileError, load

    try:
        prompt = load(path)
    except PromptFileError as error:
        _say(f"Error: {error}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    question, answer = "What is the minimum balance?", "10,000 in urban branches."
    messages = (prompt.list_messages(question, answer, [(1, "Minimum balance is 10,000."),
                                                         (2, "KYC every 8 years.")])
                if prompt.listwise else
                prompt.messages(question, answer, "Minimum balance is 10,000."))
    _say(f"{path}: a {prompt.style} prompt against the {prompt.against}, reply "
         f"{prompt.reply.describe()}, {counted(len(prompt.examples), 'example')}. Its request "
         "for an example golden:")
    for message in messages:
        _say(f"--- {message['role']}")
        _say(visible(message["content"]))
    _say("--- reply schema")
    _say(json.dumps(prompt.schema_for([1, 2]) if prompt.listwise else prompt.schema, indent=1))


@cli.command("split")
@click.argument("session_path", metavar="SESSION", type=SESSION)
@click.option("--dev", "dev", type=click.FloatRange(0, 1), default=0.5, show_default=True,
              help="Share of goldens for the dev split; the rest are test.")
@click.option("--seed", type=int, required=True, help="The same seed gives the same split.")
@click.option("--stratify", metavar="KEY", help="Split each group of goldens sharing this "
              "metadata value (e.g. retriever) in the same proportion.")
@click.option("--replace", is_flag=True, help="Draw every golden's split again (by default only "
              "goldens without one get a split, so a split already in use never changes).")
def split_command(session_path: str, dev: float, seed: int, stratify: str | None,
                  replace: bool) -> None:
    """Mark goldens dev or test, reproducibly, so a judge tuned on dev is scored on test.

    Tune prompts while looking at the dev goldens only; 'annotator judges' then scores
    every judge on the test goldens by default.

    \b
    Example:
      annotator split review.db --dev 0.5 --seed 1
      annotator split review.db --dev 0.3 --seed 1 --stratify retriever
    """
    from annotator.scoring.splits import assign_splits

    with _open(session_path) as session:
        existing = {} if replace else session.splits()
        todo = [g for g in session.golden_ids() if g not in existing]
        if not todo:
            _say(f"Every golden of {session_path} already has a split; nothing changed "
                 "(use --replace to draw them all again).")
            return
        strata = session.metadata_values(stratify) if stratify else None
        if stratify and not strata:
            raise click.BadParameter(f"no golden has a metadata value '{stratify}'",
                                     param_hint="--stratify")
        drawn = assign_splits(todo, dev, seed, strata)
        session.set_splits(drawn, seed, replace=replace)
        every = {**existing, **drawn}
    counts = {name: sum(v == name for v in every.values()) for name in ("dev", "test")}
    _say(f"{counted(len(drawn), 'golden')} given a split (seed {seed}); {session_path} "
         f"now has {counts['dev']:,} dev and {counts['test']:,} test goldens.")


@cli.command("serve")
@click.argument("session_path", metavar="SESSION", type=SESSION)
@click.option("--host", default="127.0.0.1", show_default=True,
              help="The address to listen on; anything but this machine's own is open to "
              "anyone who can reach the port.")
@click.option("--port", type=click.IntRange(1, 65535), default=8000, show_default=True)
@click.option("--judge", "-j", help="Whose verdicts everyone reviews (default: the only judge).")
@click.option("--pass-mark", type=click.FloatRange(0, 1), default=0.7, show_default=True)
@click.option("--blind-rate", type=click.FloatRange(0, 1), default=0.0, show_default=True,
              help="Share of chunks everyone answers before seeing the judge's verdict.")
@click.option("--sample", "sample_size", type=click.IntRange(1),
              help="Everyone labels the same sample of this many goldens.")
@click.option("--design", type=click.Choice(DESIGNS), default="uniform", show_default=True,
              help="How --sample draws (as annotate's --design).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of --sample.")
@click.option("--adjudicate", is_flag=True,
              help="Open the adjudication screen instead (gold labels under each name).")
@click.option("--user-header", metavar="HEADER",
              help="Take each person's name from this request header, set by an authenticating "
              "proxy (e.g. X-Forwarded-User); the URL's ?annotator= is then ignored.")
@click.option("--trusted-proxy", metavar="ADDR", help="With --user-header: the proxy's address "
              "(or network, e.g. 10.0.0.0/24); requests from anywhere else are refused, so no "
              "one can set the header by going around the proxy.")
@click.option("--dashboard", is_flag=True,
              help="Serve /dashboard: each person's progress and the agreement between people.")
@click.option("--max-tabs", type=click.IntRange(1), help="The most annotation screens open at "
              "once (each is a process); default: what this machine's free memory holds at "
              "200 MB a screen.")
@_check_options
@_team_options
def serve_command(session_path: str, host: str, port: int, judge: str | None, pass_mark: float,
                  blind_rate: float, sample_size: int | None, design: str, seed: int,
                  adjudicate: bool, user_header: str | None, trusted_proxy: str | None,
                  dashboard: bool, max_tabs: int | None, check_rate: float,
                  checks_from: str | None, checks_min: float, per_golden: int | None,
                  lease_minutes: float, gate: int | None) -> None:
    """Serve the annotation screen to a team's browsers, one session file for everyone.

    Each person opens http://HOST:PORT/?annotator=NAME (or the page asks for a name); each tab
    runs its own annotation screen, and every decision is in SESSION the moment it is shown.
    The options are the same for everyone.

    \b
    Examples:
      annotator serve team.db --blind-rate 0.15 --dashboard
      annotator serve team.db --host 0.0.0.0 --user-header X-Forwarded-User
    """
    try:
        from annotator.tui.serve import TeamServer
    except ImportError:
        from annotator.errors import install_hint

        raise click.ClickException(f"Serving needs textual-serve: {install_hint('serve')}, "
                                   "then run this again.") from None
    import ipaddress

    from annotator.tui.serve import default_max_tabs

    if trusted_proxy is not None:
        if user_header is None:
            raise click.UsageError("--trusted-proxy guards the names a proxy sets: give "
                                   "--user-header HEADER too.")
        try:
            ipaddress.ip_network(trusted_proxy, strict=False)
        except ValueError:
            raise click.BadParameter(f"{trusted_proxy!r} is not an address or network "
                                     "(e.g. 127.0.0.1 or 10.0.0.0/24).",
                                     param_hint="--trusted-proxy") from None
    max_tabs = max_tabs or default_max_tabs()
    with _open(session_path) as session:
        name = session.name
        judge = _choose_judge(session, judge) if not adjudicate else judge
        if sample_size is not None:
            from annotator.scoring.sampling import draw

            draw(session, sample_size, design, seed, judge)
        if not adjudicate:  # kept in the session: each tab reads them there
            _, check_rate = _prepare_checks(session, check_rate, checks_from)
            _set_gate(session, gate, checks_min, checks_from)
            _quota(session, per_golden, lease_minutes)  # each tab makes its own from settings
    settings = {"session": session_path if is_url(session_path) else str(
                    Path(session_path).resolve()), "judge": judge, "pass_mark": pass_mark,
                "blind_rate": blind_rate, "sample": sample_size is not None,
                "adjudicate": adjudicate, "check_rate": check_rate, "checks_min": checks_min,
                "per_golden": per_golden, "lease_minutes": lease_minutes}

    show = None
    if dashboard:
        def show() -> str:
            from annotator.people.team import team_progress
            from annotator.tui.serve import dashboard_html

            with _open(session_path) as session:
                progress = team_progress(session)
            return dashboard_html(progress)
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = host == "localhost"
    if not loopback:
        _say(f"Warning: listening on {host}: anyone who can reach port {port} can label as "
             "anyone. Put it behind a proxy that authenticates people and pass --user-header "
             "(README: 'Serving a team').", err=True)
    shown_host = host if loopback or host not in ("0.0.0.0", "::") else "THIS-MACHINE"
    _say(f"Serving {name} on http://{shown_host}:{port}/?annotator=NAME"
         + (f" (dashboard: http://{shown_host}:{port}/dashboard)" if dashboard else "")
         + f", at most {max_tabs} screens at once (--max-tabs). Ctrl+C stops it; every "
         "decision is already saved.", err=True)

    def known_names() -> list[str]:
        with _open(session_path) as session:
            return session.annotators()

    try:
        TeamServer(settings, host=host, port=port, title=f"cp-annotator: {name}",
                   user_header=user_header, dashboard=show, max_tabs=max_tabs,
                   trusted_proxy=trusted_proxy, known_names=known_names).serve()
    except OSError as error:  # the address: taken, not this machine's, or not ours to use
        import errno

        why = {errno.EADDRINUSE: "is in use (another server, or another 'annotator serve'?)",
               errno.EACCES: "needs privileges this user does not have",
               errno.EADDRNOTAVAIL: "is not an address of this machine"}.get(
                   error.errno or 0, f"cannot be listened on ({error.strerror or error})")
        raise click.ClickException(f"{host}:{port} {why}: choose another with --port (or "
                                   "--host), or stop what holds it.") from None


@cli.command("merge")
@click.argument("sources", metavar="SESSION...", nargs=-1, required=True, type=SESSION_EXISTS)
@click.option("--output", "-o", required=True, type=SESSION,
              help="The new team session to write (a file, or an empty PostgreSQL database).")
def merge_command(sources: tuple[str, ...], output: str) -> None:
    """Merge several people's session files over the same goldens into a new one.

    Every label, verdict, gold label, split and event of every file is kept. Where one
    person labelled a chunk differently in two files, the newest label is in force and each
    version is listed here and kept in the file. The order of the files does not matter, and
    merging a file in twice changes nothing.

    \b
    Example:
      annotator merge alice.db bob.db --output team.db
    """
    from annotator.people.merge import merge_sessions

    summary = merge_sessions(sources, output)
    _say(f"Merged {counted(len(sources), 'session')} into {shown(output)}: "
         f"{counted(summary.goldens, 'golden')}, {counted(summary.labels, 'label')} from "
         f"{counted(len(summary.annotators), 'annotator')} "
         f"({', '.join(summary.annotators) or 'none'}), judges: "
         f"{', '.join(summary.judges) or 'none'}.")
    if summary.conflicts:
        _say(f"{counted(len(summary.conflicts), 'chunk')} labelled differently by the same "
             "person in different files; the newest label is in force, every version is "
             "kept:")
        for conflict in summary.conflicts:
            versions = "; ".join(
                f"{'-' if verdict is None else verdict}"
                + (f" ({note!r})" if note else "") + f" at {when}"
                for verdict, note, when in conflict.versions)
            _say(f"  {conflict.annotator}, golden {conflict.golden_id} rank "
                 f"{conflict.rank}: {versions}")
    if summary.gold_conflicts:
        _say(f"{counted(summary.gold_conflicts, 'chunk')} had different gold labels in "
             "different files; the newest is in force.")


@cli.command("copy")
@click.argument("session_path", metavar="SESSION", type=SESSION)
@click.argument("target", metavar="NEW", type=SESSION)
def copy_command(session_path: str, target: str) -> None:
    """Copy a session to a new file or an empty PostgreSQL database, everything in it, even
    while it is in use.

    A plain cp of a session file in use can miss the newest verdicts and labels (they may
    still be in its -wal file); this copy takes them all, through SQLite's backup API.
    Between a file and a database (either way) every table is copied in one transaction and
    its rows counted on both sides.

    \b
    Example:
      annotator copy base.db alice.db
      annotator copy team.db postgresql://annotator@db.internal/team
      annotator copy postgresql://annotator@db.internal/team snapshot.db
    """
    from annotator.progress import counter

    with _open(session_path, reads_only=True) as session:
        copied = [0]

        with counter(f"Copying {shown(session_path)}", unit="rows") as show:
            def advance(_table: str, rows: int) -> None:
                copied[0] += rows
                show(copied[0])

            counts = session.copy_to(target, advance)
        goldens, chunks = session.count_goldens(), session.count_chunks()
    checked = "" if counts is None else (
        f" ({counted(sum(counts.values()), 'row')} in {counted(len(counts), 'table')}, "
        "counted on both sides)")
    _say(f"Copied {shown(session_path)} to {shown(target)}: {counted(goldens, 'golden')}, "
         f"{counted(chunks, 'chunk')}, every verdict and label{checked}.")


@cli.command("remove-judge")
@click.argument("session_path", metavar="SESSION", type=SESSION)
@click.argument("name")
@click.option("--annotator", "-a", default=_login_name, show_default="your login name",
              help="Who removed it, for the session's event log.")
def remove_judge_command(session_path: str, name: str, annotator: str) -> None:
    """Remove a judge with every call it made (a failed experiment, a typo in --name).

    Refused while people's labels were made reviewing the judge's verdicts. The removal is
    written to the session's event log.

    \b
    Example:
      annotator remove-judge review.db gpt-4o-mini-builtin
    """
    from annotator.resolve import judge_named

    with _open(session_path) as session:
        judged = session.judge_verdict_counts()
        judge_named(judged, name)
        calls = session.remove_judge(name, by=annotator)
    _say(f"Removed judge '{name}' and its {counted(calls, 'stored call')} "
         f"({counted(judged[name], 'chunk')} judged) from {session_path}.")


@cli.command("info")
@click.argument("session_path", metavar="SESSION", type=SESSION)
def info_command(session_path: str) -> None:
    """Summarise a session: goldens, chunks, judges, each person's progress, splits, the random
    sample, gold labels, the team's guidelines, gate and claims, and merge conflicts.

    \b
    Example:
      annotator info review.db
    """
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    with _open(session_path, reads_only=True) as session:
        console = Console(highlight=False)
        chunk_counts = session.chunk_counts()
        console.print(Text.assemble((visible(shown(session_path)), "bold"),
                                    f": {counted(len(chunk_counts), 'golden')}"
                                    f", {counted(sum(chunk_counts.values()), 'chunk')}"))
        # Names and paths are data: Text cells, so brackets in them are never read as markup.
        judges = Table("judge", "model", "prompt", "chunks judged", "trusted from",
                       title="Judges", title_justify="left")
        judged = session.judge_verdict_counts()
        for judge in session.judges():
            judges.add_row(Text(visible(judge.name)), Text(visible(judge.model or "-")),
                           Text(visible(judge.prompt_id)),
                           f"{judged.get(judge.name, 0):,}", _trusted_from(session, judge.name))
        if judges.rows:
            console.print(judges)
        people = Table("annotator", "chunks decided", "goldens complete", title="Annotators",
                       title_justify="left")
        for annotator in session.annotators():
            decided = session.label_counts(annotator)
            complete = sum(1 for g, n in decided.items() if n == chunk_counts.get(g))
            people.add_row(Text(visible(annotator)), f"{sum(decided.values()):,}",
                           f"{complete:,} of {len(chunk_counts):,}")
        notes = []
        if people.rows:
            console.print(people)
        else:  # an empty box says nothing; a sentence says what to do
            notes.append(f"Annotators: nobody has labelled a chunk yet ('annotator annotate "
                         f"{_hint_word(session_path)}' starts).")
        if not judges.rows:
            notes.insert(0, f"Judges: none yet ('annotator judge {_hint_word(session_path)} "
                            "--model M' judges every chunk).")
        from annotator.report.epochs import epochs_of, span_sentence

        notes.extend(span for judge in session.judges_judged()
                     if (span := span_sentence(epochs_of(session, judge))) is not None)
        if splits := session.splits():
            dev = sum(v == "dev" for v in splits.values())
            notes.append(f"Split: {dev:,} dev and {len(splits) - dev:,} test goldens"
                         + (f", {len(chunk_counts) - len(splits):,} without a split"
                            if len(splits) < len(chunk_counts) else "") + ".")
        if sample := session.random_sample():
            notes.append(f"Random sample: {counted(len(sample['golden_ids']), 'golden')} (--sample "
                         f"{sample['size']} --seed {sample['seed']}).")
        if gold := session.gold_labels():
            notes.append(f"Gold labels: {counted(len(gold), 'chunk')} adjudicated.")
        if versions := session.guidelines():
            latest = versions[-1]
            notes.append(f"Guidelines: version {latest.version} in force, set "
                         f"{latest.set_at[:16].replace('T', ' ')}"
                         f"{f' by {latest.set_by}' if latest.set_by else ''} ('annotator "
                         f"guidelines {_hint_word(session_path)} list').")
        if gate := session.gate():
            notes.append(f"Qualification gate: {counted(gate['checks'], 'check chunk')} at "
                         f"{gate['min']:.0%} for newcomers "
                         f"({counted(len(gate['exempt']), 'person', 'people')} exempt).")
        by_golden, _ = session.claim_counts()
        if by_golden:
            done = sum(d for d, _ in by_golden.values())
            held = sum(h for _, h in by_golden.values())
            notes.append(f"Goldens taken (--per-golden): {counted(done, 'claim')} done, "
                         f"{held:,} open now, on {counted(len(by_golden), 'golden')}.")
        if conflicts := session.label_conflicts():
            chunks = len({(c["annotator"], c["chunk_id"]) for c in conflicts})
            notes.append(f"Merge conflicts: {counted(chunks, 'chunk')} one person labelled "
                         "differently in different files (the newest label is in force; every "
                         "version is kept).")
        for note in notes:
            console.print(visible(note), markup=False, highlight=False)
