"""cp-annotator from Python, for a notebook or a script: import goldens into a session file, and
read its report, its judge leaderboard and its chunks as plain data.

The report and the leaderboard are the dicts `annotator report --format json` and `annotator
judges --format json` write (docs/python.md); the chunks are one dict a chunk, ready for
``pandas.DataFrame``. Every function takes a session file's path, or a Session already open
(``annotator.api.open_session``), and a reader never writes to the file.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from annotator.errors import SessionError
from annotator.formats import ColumnMap
from annotator.importers import SOURCES
from annotator.intake import Intake
from annotator.jsonout import plain
from annotator.models import ImportSummary
from annotator.place import shown
from annotator.stats.alt_test import ALPHA as ALT_ALPHA
from annotator.stats.alt_test import EPSILON
from annotator.store.session import Session, exists

if TYPE_CHECKING:
    import pandas

SessionLike = str | Path | Session
"""A session file's path, a PostgreSQL URL, or a Session already open."""


def open_session(path: str | Path) -> Session:
    """Open an existing session, a file or a PostgreSQL URL (``with open_session(p) as s:``
    closes it again)."""
    if not exists(path):
        raise SessionError(f"{shown(path)} does not exist; make it with "
                           f"annotator.api.import_goldens({shown(path)!r}, 'goldens.jsonl').")
    return Session(path, create=False)


@contextmanager
def _session(where: SessionLike) -> Iterator[Session]:
    """The Session given, or the file opened for the call and closed after it."""
    if isinstance(where, Session):
        if where.closed:
            raise SessionError(f"The session {where.where} was closed; open it again with "
                               f"annotator.api.open_session({where.where!r}).")
        yield where
        return
    if not isinstance(where, str | Path):
        raise SessionError(f"A session is a session file's path or an open Session, not "
                           f"{type(where).__name__}.")
    with open_session(where) as session:
        yield session


def _names(given: Sequence[str] | str | None, what: str) -> list[str] | None:
    """A list of names as given (one name as a string is one name, never its letters)."""
    if given is None:
        return None
    if isinstance(given, str):
        return [given]
    if not all(isinstance(name, str) for name in given):
        raise SessionError(f"{what} are names (strings), not {list(given)!r}.")
    return list(given)


def _check_options(bootstrap: int, pass_mark: float | None = None) -> None:
    """Refuse what the command's options would refuse, in its words."""
    if isinstance(bootstrap, bool) or not isinstance(bootstrap, int) or bootstrap < 0:
        raise SessionError(f"bootstrap is a number of resamples, 0 or more (0: no intervals), "
                           f"not {bootstrap!r}.")
    if pass_mark is not None and not 0 <= pass_mark <= 1:
        raise SessionError(f"pass_mark is a context precision from 0 to 1, not {pass_mark!r}.")


def import_goldens(session_path: str | Path, *files: str | Path, replace: bool = False,
                   mapping: Mapping[str, str] | None = None, source: str = "ragas",
                   retriever: str | None = None) -> list[ImportSummary]:
    """Import goldens files (JSONL, JSON, CSV, parquet, a tracer's export) into a session
    file, made if missing, each file in one transaction, as `annotator import` does; one
    summary a file. ``mapping`` is `--map`'s, as {field: path}; ``source`` and ``retriever``
    are `--from`'s and `--retriever`'s. A file with an error raises InputError naming its line
    and field, and changes nothing (a session file this call made and nothing went into is
    removed)."""
    if source not in SOURCES:
        raise SessionError(f"source is one of {', '.join(SOURCES)}, not {source!r}.")
    try:
        column_map = None if not mapping else ColumnMap.parse(
            [f"{field}={path}" for field, path in mapping.items()])
    except ValueError as error:
        raise SessionError(f"mapping: {error}.") from None
    intake = Intake(files, mapping=column_map, source=source, retriever=retriever,
                    replace=replace)
    return [done.summary for done in intake.into(session_path)]


def import_trec(session_path: str | Path, queries: str | Path, *,
                run: str | Path | None = None, pool: str | Path | None = None,
                corpus: str | Path | None = None, labels: Mapping[str, str | Path] | None = None,
                judges: Mapping[str, str | Path] | None = None, scale: str | None = None,
                relevant_from: int | None = None, replace: bool = False) -> ImportSummary:
    """Import an IR collection into a session file, made if missing, as `annotator
    import-trec` does: ``labels`` and ``judges`` map a name to its graded qrels file;
    ``scale`` is '0-N'. A file with an error raises, naming its line and value, and changes
    nothing (a session file this call made and nothing went into is removed)."""
    from annotator.intake.trec import import_collection

    return import_collection(
        session_path, queries, run=run, pool=pool, corpus=corpus,
        labels=[f"{name}={path}" for name, path in (labels or {}).items()],
        judges=[f"{name}={path}" for name, path in (judges or {}).items()], scale=scale,
        relevant_from=relevant_from, replace=replace).summary


def report(session: SessionLike, *, judge: str | None = None,
           annotators: Sequence[str] | str | None = None, gold: bool = False,
           pass_mark: float = 0.7, bootstrap: int = 2000, seed: int | None = 0,
           group_by: str | None = None, top_k: bool = False,
           epochs: Sequence[str] = ()) -> dict[str, Any]:
    """The agreement report as the dict its JSON holds (schema_version, headline, agreement,
    context_precision, systems, ...); the options are `annotator report`'s (``epochs``:
    its --epoch values)."""
    from annotator.report.build import build_report
    from annotator.report.epochs import epochs_given
    from annotator.report.serialize import report_dict
    from annotator.resolve import annotator_named

    _check_options(bootstrap, pass_mark)
    annotators = _names(annotators, "annotators")
    with _session(session) as opened, epochs_given(opened, epochs):
        for person in annotators or ():
            annotator_named(opened.annotators(), person)
        built = build_report(opened, judge=judge, annotators=annotators, gold=gold,
                             pass_mark=pass_mark, resamples=bootstrap, seed=seed,
                             group_by=group_by, top_k=top_k)
    data: dict[str, Any] = plain(report_dict(built))
    return data


def leaderboard(session: SessionLike, *, annotator: str | None = None,
                judges: Sequence[str] | str | None = None, split: str | None = None,
                bootstrap: int = 2000, seed: int | None = 0, sort: str = "cohen_kappa",
                group_by: str | None = None, epsilon: float = EPSILON,
                alt_alpha: float = ALT_ALPHA, epochs: Sequence[str] = ()) -> dict[str, Any]:
    """The judge leaderboard as the dict its JSON holds (one row a judge, the pairs, the best
    judge); the options are `annotator judges`' (``epochs``: its --epoch values)."""
    from annotator.report.epochs import epochs_given
    from annotator.report.leaderboard import build_leaderboard
    from annotator.report.serialize import leaderboard_dict

    _check_options(bootstrap)
    judges = _names(judges, "judges")
    with _session(session) as opened, epochs_given(opened, epochs):
        board = build_leaderboard(opened, annotator=annotator, judges=judges, split=split,
                                  resamples=bootstrap, seed=seed, sort=sort, group_by=group_by,
                                  epsilon=epsilon, alt_alpha=alt_alpha)
    data: dict[str, Any] = plain(leaderboard_dict(board))
    return data


def chunks(session: SessionLike, *, judges: Sequence[str] | str | None = None,
           annotators: Sequence[str] | str | None = None) -> list[dict[str, Any]]:
    """One dict a chunk, in golden and rank order: golden_id, rank, question, chunk, doc_id,
    score, then for each judge ``verdict:NAME``, ``reason:NAME`` and ``p_relevant:NAME``, and
    for each person ``label:NAME`` (0, 1, "unsure", "distractor", or None while pending) and
    ``note:NAME`` (default: every judge and every person)."""
    columns = _chunk_columns(session, judges, annotators)
    keys = list(columns)
    return [dict(zip(keys, values, strict=True))
            for values in zip(*columns.values(), strict=True)]


def _chunk_columns(session: SessionLike, judges: Sequence[str] | str | None,
                   annotators: Sequence[str] | str | None) -> dict[str, list[Any]]:
    """chunks()'s columns: name -> one value a chunk (what a DataFrame is built from)."""
    from annotator.resolve import annotator_named, judges_named

    wanted_judges, wanted_people = _names(judges, "judges"), _names(annotators, "annotators")
    with _session(session) as opened:
        names = ([j.name for j in opened.judges()] if wanted_judges is None else
                 judges_named(opened.judges_judged(), wanted_judges) if wanted_judges else [])
        people = (opened.annotators() if wanted_people is None else
                  [annotator_named(opened.annotators(), p) for p in wanted_people])
        return opened.chunk_columns(names, people)


def chunks_frame(session: SessionLike, *, judges: Sequence[str] | str | None = None,
                 annotators: Sequence[str] | str | None = None) -> pandas.DataFrame:
    """chunks() as a pandas DataFrame (pandas is not a dependency: install it to use this)."""
    try:
        import pandas
    except ImportError:
        raise SessionError("chunks_frame needs pandas (pip install pandas); chunks() gives the "
                           "same rows as dicts without it.") from None
    return pandas.DataFrame(_chunk_columns(session, judges, annotators))
