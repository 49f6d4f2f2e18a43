"""Generated goldens for the benchmarks: realistic sizes, reproducible from a seed."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

WORDS = [
    "balance", "account", "branch", "fee", "interest", "deposit", "policy", "claim", "excess",
    "cover", "install", "config", "token", "limit", "request", "retry", "premium", "renewal",
    "minimum", "rural", "urban", "nominee", "card",
]


def generate(path: Path, goldens: int, chunks: int, seed: int = 7, *,
             annotator: str | None = None) -> int:
    """Write a JSONL file of generated goldens with judge verdicts; return its size in bytes.

    With ``annotator``, each golden also carries that person's labels (agreeing with the judge
    on about 80% of chunks) and the judge's P(relevant), as a reviewed session would.
    """
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as out:
        for i in range(goldens):
            contexts = [" ".join(rng.choices(WORDS, k=30)) for _ in range(chunks)]
            verdicts: list[dict[str, Any]] = [{"verdict": rng.randint(0, 1), "reason": "generated"}
                                              for _ in contexts]
            obj: dict[str, Any] = {
                "id": f"g{i:06d}",
                "user_input": " ".join(rng.choices(WORDS, k=10)) + "?",
                "reference": " ".join(rng.choices(WORDS, k=25)),
                "retrieved_contexts": contexts,
                "judge": "bench-judge",
                "judge_verdicts": verdicts,
                "metadata": {"retriever": rng.choice(["bm25", "dense"])},
            }
            if annotator is not None:
                for v in verdicts:
                    v["p_relevant"] = round(min(1.0, max(0.0, rng.gauss(0.2 + 0.6 * v["verdict"],
                                                                        0.2))), 3)
                obj["human_labels"] = {annotator: [v["verdict"] if rng.random() < 0.8
                                                   else 1 - v["verdict"] for v in verdicts]}
            out.write(json.dumps(obj) + "\n")
    return path.stat().st_size


def generated_session(folder: Path, goldens: int, chunks: int, *, name: str = "session",
                      annotator: str | None = None) -> Path:
    """A session file in ``folder`` holding generated goldens (the JSONL removed after import)."""
    from annotator.formats import read_goldens
    from annotator.store.session import Session

    source, db = folder / f"{name}.jsonl", folder / f"{name}.db"
    generate(source, goldens, chunks, annotator=annotator)
    with Session(db) as session:
        session.import_goldens(read_goldens(source), path=str(source))
    source.unlink()
    return db

