"""A large tracer export's peak memory: `annotator import` of an OTLP JSON document of about
100 MB (one line, as a collector or a script writes it), beside the bare program: json.load of
the same file and the RETRIEVER spans' documents picked out of it (the least any reader holds).

Prints each program's CPU seconds and peak resident MB and the ratio of the peaks, with the
budget. Run: python benchmarks/tracer_memory.py [--mb 101]
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import tempfile
from pathlib import Path

from measure import measured

ROOT = Path(__file__).resolve().parent.parent
BUDGET_RATIO = 1.5

BARE = """
import json, sys
document = json.load(open(sys.argv[1], encoding="utf-8"))
goldens = []
for resource in document["resourceSpans"]:
    for scope in resource["scopeSpans"]:
        for span in scope["spans"]:
            attributes = {a["key"]: a["value"] for a in span.get("attributes", [])}
            if attributes.get("openinference.span.kind", {}).get("stringValue") == "RETRIEVER":
                goldens.append([v for k, v in attributes.items() if k.endswith(".content")])
print(len(goldens))
"""


def export(path: Path, megabytes: float) -> int:
    """Write an OTLP document of about ``megabytes``: the fixture's traces again and again,
    each copy with trace and span ids of its own; the number of spans."""
    fixture = json.loads((ROOT / "tests" / "fixtures" / "openinference-spans.json").read_text())
    spans = fixture["resourceSpans"][0]["scopeSpans"][0]["spans"]
    out, size, copy_number = [], 0, 0
    while size < megabytes * 2**20:
        copy_number += 1
        ids = {s["spanId"]: f"{copy_number:08x}{n:08x}" for n, s in enumerate(spans)}
        for span in spans:
            made = copy.deepcopy(span)
            made["traceId"] = f"{copy_number:016x}{hash(span['traceId']) & 0xFFFF:016x}"
            made["spanId"] = ids[span["spanId"]]
            if "parentSpanId" in made:
                made["parentSpanId"] = ids.get(made["parentSpanId"], made["parentSpanId"])
            out.append(made)
            size += len(json.dumps(made))
    fixture["resourceSpans"][0]["scopeSpans"][0]["spans"] = out
    path.write_text(json.dumps(fixture), encoding="utf-8")
    return len(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=float, default=101.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "export.json"
        spans = export(source, args.mb)
        ours_cpu, ours_mb = measured([sys.executable, "-m", "annotator", "import", str(source),
                                      "--session", str(Path(tmp) / "s.db")])
        bare_cpu, bare_mb = measured([sys.executable, "-c", BARE, str(source)])
        size = source.stat().st_size / 2**20
    print(f"OTLP export of {size:.0f} MB ({spans:,} spans), one line:")
    print(f"  annotator import  {ours_cpu:6.1f} s CPU  {ours_mb:7.0f} MB peak")
    print(f"  bare json.load    {bare_cpu:6.1f} s CPU  {bare_mb:7.0f} MB peak")
    print(f"  peak ratio {ours_mb / bare_mb:.2f} (budget {BUDGET_RATIO})")


if __name__ == "__main__":
    main()
