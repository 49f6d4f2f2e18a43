"""The floor for an import: parse each JSONL line, hash the golden, executemany into the same
schema (copied from an empty session file), one transaction.

The simplest program loading a generated goldens file as 'annotator import' does, without any
check beyond json.loads.
Run: python benchmarks/bare/bare_import.py EMPTY_SESSION.db OUT.db GOLDENS.jsonl
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import sys
from typing import Any


def main() -> None:
    """Load the file."""
    template, out, source = sys.argv[1:4]
    conn = sqlite3.connect(out, isolation_level=None)
    for (sql,) in sqlite3.connect(template).execute(
            "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' "
            "ORDER BY type = 'index'"):
        conn.execute(sql)
    conn.execute("INSERT INTO judges(name, prompt_id, created_at) VALUES ('bench-judge', "
                 "'imported', 'now')")
    conn.execute("BEGIN")
    goldens: list[tuple[Any, ...]] = []
    chunks: list[tuple[Any, ...]] = []
    verdicts: list[tuple[Any, ...]] = []
    chunk_id = 0
    with open(source, encoding="utf-8") as lines:
        for position, line in enumerate(lines, 1):
            obj = json.loads(line)
            content = {k: obj.get(k) for k in ("user_input", "reference", "response",
                                               "retrieved_contexts", "metadata")}
            sha = hashlib.sha256(json.dumps(content, ensure_ascii=False, sort_keys=True,
                                            separators=(",", ":")).encode()).hexdigest()
            goldens.append((obj["id"], position, obj["user_input"], obj["reference"], None,
                            json.dumps(obj["metadata"]), sha, "now"))
            for rank, (text, said) in enumerate(zip(obj["retrieved_contexts"],
                                                    obj["judge_verdicts"], strict=True), 1):
                chunk_id += 1
                chunks.append((chunk_id, obj["id"], rank, text))
                verdicts.append(("bench-judge", chunk_id, said["verdict"], said["reason"], "now"))
            if len(chunks) > 20_000:
                flush(conn, goldens, chunks, verdicts)
    flush(conn, goldens, chunks, verdicts)
    conn.execute("COMMIT")


def flush(conn: sqlite3.Connection, goldens: list[tuple[Any, ...]],
          chunks: list[tuple[Any, ...]], verdicts: list[tuple[Any, ...]]) -> None:
    """Write the queued rows and empty the queues."""
    conn.executemany("INSERT INTO goldens(id, position, user_input, reference, response, metadata, "
                     "content_sha256, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", goldens)
    conn.executemany("INSERT INTO chunks(id, golden_id, rank, text) VALUES (?, ?, ?, ?)", chunks)
    conn.executemany("INSERT INTO verdicts(judge, chunk_id, verdict, reason, created_at) "
                     "VALUES (?, ?, ?, ?, ?)", verdicts)
    goldens.clear()
    chunks.clear()
    verdicts.clear()


if __name__ == "__main__":
    main()
