"""Run request shards through Ray Data against an OpenAI-compatible endpoint: the path a team
takes to judge millions of chunks on its own cluster.

    annotator judge S.db --model M --export-requests shards --shard-size 10000
    python scripts/ray_judge.py shards results --base-url http://GPU-HOST:8000/v1
    annotator import-results S.db results

Every line of every shard becomes a row of a Ray dataset; each block of rows is answered by a
worker through the `openai` client and written as one Batch API results file into RESULTS
(on a cluster, a folder every worker can write: shared storage). A reply the endpoint refuses
is written as its error, so import-results stores it as a failed call and the next run asks
again. Run it again on the same shards and import again: results stored before are skipped.
The key comes from OPENAI_API_KEY (a local server needs none). --address joins a running
cluster; without it a local one starts on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import uuid
from pathlib import Path
from typing import Any


def answer_block(batch: dict[str, Any], base_url: str, results: str,
                 timeout: float) -> dict[str, list[int]]:
    """Answer one block of request lines and write their results file; return how many."""
    import openai

    client = openai.OpenAI(base_url=base_url, api_key=os.environ.get("OPENAI_API_KEY", "none"),
                           timeout=timeout, max_retries=3)
    lines = []
    for text in batch["text"]:
        if not text.strip():
            continue
        request = json.loads(text)
        line: dict[str, Any] = {"id": f"ray-{uuid.uuid4().hex}",
                                "custom_id": request["custom_id"], "error": None}
        try:
            reply = client.chat.completions.create(**request["body"])
            line["response"] = {"status_code": 200, "body": reply.model_dump(mode="json")}
        except openai.APIStatusError as error:
            line["response"] = {"status_code": error.status_code, "body": error.body}
        except openai.APIError as error:  # no reply at all: a connection refused, a timeout
            line["response"] = None
            line["error"] = {"code": type(error).__name__, "message": str(error)}
        lines.append(json.dumps(line))
    if lines:
        out = Path(results) / f"results-{uuid.uuid4().hex}.jsonl"
        out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {"answered": [len(lines)]}


def main() -> int:
    """Answer every shard of a folder into a results folder."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("shards", help="the folder judge --export-requests --shard-size wrote")
    parser.add_argument("results", help="the folder to write results files into (made if "
                                        "missing)")
    parser.add_argument("--base-url", required=True, help="the endpoint, ending in /v1")
    parser.add_argument("--address", help="a running Ray cluster to join (default: a local "
                                          "one on 127.0.0.1)")
    parser.add_argument("--concurrency", type=int, default=2, help="workers answering at once")
    parser.add_argument("--block", type=int, default=100, help="request lines a worker answers "
                                                                "and writes as one file")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds a request may take")
    args = parser.parse_args()
    shards = Path(args.shards)
    if not shards.is_dir() or not any(shards.glob("*.jsonl")):
        print(f"{shards} holds no .jsonl shard; write them with 'annotator judge ... "
              "--export-requests FOLDER --shard-size N'.", file=sys.stderr)
        return 2
    Path(args.results).mkdir(parents=True, exist_ok=True)

    import logging

    import ray

    logging.getLogger("ray.data").setLevel(logging.WARNING)  # its progress lines, per block
    if args.address:
        ray.init(address=args.address, log_to_driver=False, logging_level=logging.WARNING)
    else:
        ray.init(num_cpus=max(2, args.concurrency), include_dashboard=False,
                 log_to_driver=False, logging_level=logging.WARNING,
                 _node_ip_address="127.0.0.1")
    try:
        dataset = ray.data.read_text(str(shards), file_extensions=["jsonl"])
        answered = dataset.map_batches(
            answer_block, batch_size=args.block, concurrency=args.concurrency,
            fn_kwargs={"base_url": args.base_url, "results": str(Path(args.results).resolve()),
                       "timeout": args.timeout})
        total = int(answered.sum("answered"))
    finally:
        ray.shutdown()
    print(f"Answered {total:,} requests into {args.results}; store them with "
          f"'annotator import-results SESSION {args.results}'.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
