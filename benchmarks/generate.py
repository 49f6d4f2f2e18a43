"""Generated goldens for the benchmarks: realistic sizes, reproducible from a seed."""

from __future__ import annotations

import json
import random
from pathlib import Path

WORDS = [
    "balance", "account", "branch", "fee", "interest", "deposit", "policy", "claim", "excess",
    "cover", "install", "config", "token", "limit", "request", "retry", "premium", "renewal",
    "minimum", "rural", "urban", "nominee", "card",
]


def generate(path: Path, goldens: int, chunks: int, seed: int = 7) -> int:
    """Write a JSONL file of generated goldens with judge verdicts; return its size in bytes."""
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as out:
        for i in range(goldens):
            contexts = [" ".join(rng.choices(WORDS, k=30)) for _ in range(chunks)]
            obj = {
                "id": f"g{i:06d}",
                "user_input": " ".join(rng.choices(WORDS, k=10)) + "?",
                "reference": " ".join(rng.choices(WORDS, k=25)),
                "retrieved_contexts": contexts,
                "judge": "bench-judge",
                "judge_verdicts": [{"verdict": rng.randint(0, 1), "reason": "generated"}
                                   for _ in contexts],
                "metadata": {"retriever": rng.choice(["bm25", "dense"])},
            }
            out.write(json.dumps(obj) + "\n")
    return path.stat().st_size
