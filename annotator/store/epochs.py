"""A judge's epoch: the judge as actually served, as one short identity.

An epoch hashes what the provider said served a reply (its ``model`` and ``system_fingerprint``)
with everything the session stores about the judge's requests: the prompt's sha256 and reply
kind, the examples it shows, the sampling settings. Verdicts of two epochs are never pooled
silently (the Session reads one epoch a judge: the latest, or the one chosen). Verdicts stored
before epochs existed, and imported ones, belong to the epoch of the judge's configured model
with no fingerprint: nothing else is known about what served them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

EPOCH_CHARS = 12
"""Hex digits an epoch keeps: 48 bits, unique among a judge's few epochs and short to type."""


def definition(judge: Mapping[str, Any], examples: Sequence[Sequence[Any]]) -> dict[str, Any]:
    """What a judge row (and its examples' rows) fixes about its requests."""
    text = judge["prompt_text"]
    reply = json.loads(text).get("reply") if text else None
    parameters = judge["parameters"]
    return {"prompt": judge["prompt_id"], "prompt_sha256": judge["prompt_sha256"],
            "reply": reply or "binary", "examples": [list(e) for e in examples],
            "sampling": json.loads(parameters) if isinstance(parameters, str) else parameters}


def epoch_of(judge: Mapping[str, Any], model: str | None, fingerprint: str | None) -> str:
    """The epoch of a judge definition (``definition``'s dict) served as ``model`` with this
    ``fingerprint`` (None where the provider said none)."""
    served = {"model": model, "fingerprint": fingerprint, **judge}
    text = json.dumps(served, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:EPOCH_CHARS]
