"""A small offline engine, as `vllm run-batch -i requests.jsonl -o results.jsonl` is: it reads a
Batch API request file and writes each answer in the batch output format, answering exactly as
the test server's chat endpoint does (the same plans, the same verdicts)."""

from __future__ import annotations

import argparse
import json

from tests.fake_batches import Capture
from tests.fake_openai import FakeOpenAI


def run(requests: str, results: str, server: FakeOpenAI | None = None) -> int:
    """Answer every request of the file; returns how many."""
    server = server or FakeOpenAI()
    count = 0
    with open(requests, encoding="utf-8") as source, open(results, "w", encoding="utf-8") as out:
        for n, line in enumerate(source):
            request = json.loads(line)
            capture = Capture()
            server.batch._answer(capture, request["body"])
            out.write(json.dumps({"id": f"engine-{n}", "custom_id": request["custom_id"],
                                  "response": {"status_code": capture.status,
                                               "body": json.loads(capture.data)},
                                  "error": None}) + "\n")
            count += 1
    return count


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-i", required=True)
    parser.add_argument("-o", required=True)
    args = parser.parse_args()
    print(run(args.i, args.o))
