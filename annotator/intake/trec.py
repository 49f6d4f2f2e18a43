"""An IR collection into a session (``annotator import-trec`` and ``api.import_trec``): its
files read and checked (annotator/importers/trec.py), the rules of its grade scale and its
settings settled, then stored in one transaction.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from annotator.errors import SessionError
from annotator.importers.trec import Collection, named_file, read_collection, scale_of
from annotator.models import ImportSummary, Scale
from annotator.store.session import Session, exists, new_session


@dataclass(frozen=True, slots=True)
class CollectionImport:
    """What importing an IR collection did, and what a person should be told of it."""

    summary: ImportSummary
    scale: Scale
    """The grade scale the qrels were read on (0-1 for binary ones)."""
    graded: bool
    ranked: bool
    """False for an unranked pool: no CP, no rank statistics."""
    notes: list[str] = field(default_factory=list)
    """Documents a qrels file grades that no query's list holds, and the like."""


@dataclass(frozen=True, slots=True)
class CollectionRead:
    """An IR collection read and checked, not yet stored (``read_collection_files``)."""

    collection: Collection
    queries: str
    given: Scale | None
    """The scale asked for ('0-N'), if one was."""
    from_files: Scale | None
    """The scale the qrels were read on, if any qrels came."""
    relevant_from: int | None


def import_collection(session_path: str | Path, queries: str | Path, *,
                      run: str | Path | None = None, pool: str | Path | None = None,
                      corpus: str | Path | None = None, labels: Sequence[str] = (),
                      judges: Sequence[str] = (), scale: str | None = None,
                      relevant_from: int | None = None, replace: bool = False,
                      reading: Callable[[int], None] | None = None,
                      importing: Callable[[int], None] | None = None) -> CollectionImport:
    """Import an IR collection into a session file, made if missing (and removed again when
    nothing went in): ``labels`` and ``judges`` are NAME=QRELS; ``scale`` is '0-N' (default:
    0 to the highest grade in the qrels, else the session's scale, else binary);
    ``relevant_from`` the lowest relevant grade (default: 2 on 0-3, else half-way up), stored
    with the session. ``reading`` and ``importing`` hear the lines read and the queries
    stored. A fault raises an error naming the option, or the file, line and value."""
    read = read_collection_files(session_path, queries, run=run, pool=pool, corpus=corpus,
                                 labels=labels, judges=judges, scale=scale,
                                 relevant_from=relevant_from, reading=reading)
    return store_collection(session_path, read, replace=replace, importing=importing)


def read_collection_files(session_path: str | Path, queries: str | Path, *,
                          run: str | Path | None = None, pool: str | Path | None = None,
                          corpus: str | Path | None = None, labels: Sequence[str] = (),
                          judges: Sequence[str] = (), scale: str | None = None,
                          relevant_from: int | None = None,
                          reading: Callable[[int], None] | None = None) -> CollectionRead:
    """``import_collection``'s first half: the files read and checked against the scale given,
    else the session's (it is only read)."""
    given: Scale | None = None
    try:
        if scale is not None:
            given = Scale.parse(scale, relevant_from)
        named = {option: [named_file(v, option) for v in values]
                 for option, values in (("--labels", labels), ("--judge", judges))}
    except ValueError as error:
        raise SessionError(str(error)) from None
    stored = None  # a session that has a scale holds each file's grades to it, line by line
    if given is None and exists(session_path):
        with Session(session_path, create=False) as session:
            stored = session.scale()
    top = given.top if given is not None else stored.top if stored is not None else None
    try:
        found = read_collection(
            Path(queries), run=None if run is None else Path(run),
            pool=None if pool is None else Path(pool),
            corpus=None if corpus is None else Path(corpus), labels=named["--labels"],
            judges=named["--judge"], top=top, progress=reading)
        from_files = scale_of(found, given or stored)
    except ValueError as error:
        raise SessionError(str(error)) from None
    return CollectionRead(found, str(queries), given, from_files, relevant_from)


def store_collection(session_path: str | Path, read: CollectionRead, *, replace: bool = False,
                     importing: Callable[[int], None] | None = None) -> CollectionImport:
    """``import_collection``'s second half: the collection stored in one transaction, with its
    scale (and whether it is an unranked pool) as the session's settings."""
    done: list[CollectionImport] = []
    found = read.collection
    with new_session(session_path, keep=lambda: bool(done)), \
            Session(session_path, create=True) as session:
        # No qrels and no --scale: the session's own scale, else binary.
        read_on = read.from_files or session.scale() or Scale(1, 1)
        try:
            if read.relevant_from is not None and read.given is None:
                read_on = Scale(read_on.top, read.relevant_from)
        except ValueError as error:
            raise SessionError(f"--relevant-from: {error}") from None
        graded = read_on.top > 1 or read.given is not None
        settings: dict[str, object] = (
            {"grade_scale": [read_on.top, read_on.relevant_from]} if graded else {})
        if not found.ranked:
            settings["unranked"] = True
        session.refuse_collection(read_on, not found.ranked)
        summary = session.import_goldens(found.goldens(read_on), path=read.queries,
                                         replace=replace, progress=importing,
                                         settings=settings)
        done.append(CollectionImport(summary, read_on, graded, found.ranked,
                                     list(found.unplaced())))
    return done[0]
