"""Importers: each turns one source's export into goldens (RAGAS-shaped objects), keeping chunk
ids and scores; ``formats`` validates what they return like any file's lines.

A source is chosen with ``annotator import --from NAME``, or detected from the file.
"""

from __future__ import annotations

from annotator.importers import openinference

SOURCES = {"ragas": None, "openinference": openinference, "phoenix": openinference}
"""Every --from choice: RAGAS-shaped files (the default, read by formats itself), and each
importer by the names its source goes by (Phoenix exports OpenInference spans as OTLP)."""
