"""Importers: each turns one source's export into goldens (RAGAS-shaped objects), keeping chunk
ids and scores; ``formats`` validates what they return like any file's lines.

An importer is a module with ``NAME``, ``KIND_OF_FILE`` (how a sentence names its files),
``detect(document)`` (whether a parsed JSON document, or a table's rows, is its source's) and
``rows(documents, name, notices, *, retriever=None)`` (the goldens of ``(line, document)``
pairs: one document, a JSON lines file's, or a parquet file's rows; ``retriever`` is
``--retriever NAME``). A source is chosen with ``annotator import --from NAME``, or detected
from the file's first document.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from annotator.importers import langfuse, mlflow, openinference


class Importer(Protocol):
    """What an importer module holds (mypy checks each registered module against it)."""

    NAME: str
    """The name --from gives it."""
    KIND_OF_FILE: str
    """How a sentence names its source's files."""

    def detect(self, document: Any, /) -> bool:
        """Whether a parsed JSON document, or a table's rows, is its source's."""
        ...

    def rows(self, documents: Iterable[tuple[int | None, Any]], name: str, notices: list[str],
             /, *, retriever: str | None = None) -> list[dict[str, Any]]:
        """The goldens (RAGAS-shaped objects) of ``(line, document)`` pairs of file ``name``,
        a notice for each thing left out; ``retriever`` is ``--retriever NAME``."""
        ...


IMPORTERS: tuple[Importer, ...] = (openinference, mlflow, langfuse)
"""Every importer, in the order detection tries them (a new one: a module here, and a line in
this tuple and in SOURCES)."""

SOURCES: dict[str, Importer | None] = {
    "ragas": None, "hf": None, "openinference": openinference, "phoenix": openinference,
    "mlflow": mlflow, "langfuse": langfuse}
"""Every --from choice: RAGAS-shaped goldens (the default, read by formats itself, as are a
Hugging Face dataset's JSON lines, parquet and to_dict(); an export of another source is
detected), and each importer by the names its source goes by (Phoenix's exports are
OpenInference spans)."""
