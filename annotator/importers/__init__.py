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

from types import ModuleType

from annotator.importers import langfuse, mlflow, openinference

IMPORTERS: tuple[ModuleType, ...] = (openinference, mlflow, langfuse)
"""Every importer, in the order detection tries them."""

SOURCES: dict[str, ModuleType | None] = {
    "ragas": None, "hf": None, "openinference": openinference, "phoenix": openinference,
    "mlflow": mlflow, "langfuse": langfuse}
"""Every --from choice: RAGAS-shaped goldens (the default, read by formats itself, as are a
Hugging Face dataset's JSON lines, parquet and to_dict(); an export of another source is
detected), and each importer by the names its source goes by (Phoenix's exports are
OpenInference spans)."""
