"""The one way goldens come into a session: ``annotator import``, ``annotator annotate FILE``
and ``api.import_goldens`` all import through ``Intake``; an IR collection comes in through
``intake.trec`` (``import-trec``, ``api.import_trec``), and ``intake.sources`` notices a
goldens file edited since its session was made from it.

Each file is one transaction: a file with an error changes nothing and the error names its
line and field; a session file the import made, and nothing went into, is removed again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from annotator.formats import ColumnMap, companion_files, read_goldens
from annotator.models import CheckRecord, ImportSummary
from annotator.store.session import Session, new_session

Progress = Callable[[str], AbstractContextManager[Callable[[int], None] | None]]
"""Given a file's name, a context whose value hears how many goldens are in so far."""


@dataclass(frozen=True, slots=True)
class Imported:
    """One file imported: what went in, and what reading it changed on the way (notices)."""

    path: str
    summary: ImportSummary
    notices: list[str] = field(default_factory=list)


class Intake:
    """Goldens files to import, read as one (``--delimiter``, ``--map``, ``--from``,
    ``--retriever``, ``--replace``); Langfuse dataset items among the files are read with the
    traces they name, not imported as files of their own (``companions``)."""

    def __init__(self, files: Sequence[str | Path], *, delimiter: str = ",",
                 mapping: ColumnMap | None = None, source: str = "ragas",
                 retriever: str | None = None, replace: bool = False) -> None:
        names = [str(f) for f in files]
        read_whole, self._companions = companion_files(names, source)
        self.files = list(read_whole)
        self.companions = sorted(set(names) - set(read_whole))
        """Files read only as the dataset items of the others (said to the person)."""
        self.delimiter, self.mapping, self.source = delimiter, mapping, source
        self.retriever, self.replace = retriever, replace

    def into(self, session_path: str | Path, *, progress: Progress | None = None,
             then: Callable[[Session], Any] | None = None) -> Iterator[Imported]:
        """Import each file into the session file (made if missing), yielding each once it is
        stored; ``then`` runs on the session after the last. A stop (an error, Ctrl-C) keeps
        the files stored before it."""
        done: list[Imported] = []
        with new_session(session_path, keep=lambda: bool(done)), \
                Session(session_path, create=True) as session:
            for path in self.files:
                notices: list[str] = []
                checks: list[CheckRecord] = []
                with (progress(path) if progress is not None else nullcontext(None)) as advance:
                    summary = session.import_goldens(
                        read_goldens(path, delimiter=self.delimiter, notices=notices,
                                     checks=checks, mapping=self.mapping, source=self.source,
                                     retriever=self.retriever, companions=self._companions),
                        path=path, replace=self.replace, progress=advance, checks=checks)
                done.append(Imported(path, summary, notices))
                yield done[-1]
            if then is not None:
                then(session)
