"""Failed judge calls grouped by cause, each with a count, its first example and what to do.

The client marks every failed CallResult with a cause (judge/types.py). Here they are grouped
for the run's summary and its progress line, and a run whose first calls all fail the same
hopeless way (a wrong key, model or URL, no server) is told to stop at once instead of
retrying every chunk.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace

from annotator.judge.types import CallResult
from annotator.text import counted, shortened

FATAL_STREAK = 3
"""This many hopeless failures of one kind in a row, before any verdict, stop the run."""

REPLY_ADVICE = ("raise --max-tokens, or use a model that follows JSON instructions (a larger or "
                "instruction-tuned one)")


@dataclass(frozen=True, slots=True)
class Group:
    """One kind of failure: how many calls met it, the first one's error and reply."""

    key: str
    count: int
    error: str
    raw_reply: str | None
    advice: str
    fatal: bool

    def sentence(self) -> str:
        """'64 failed calls: the reply is not valid JSON (...), e.g. "Sure! Here is"; raise ...'."""
        return (f"{counted(self.count, 'failed call')}: {self.error}{self.example()}"
                + (f"; {self.advice}" if self.advice else "") + ".")

    def example(self) -> str:
        """', e.g. the reply "Sure! Here is"' when the kind kept a reply, else ''."""
        if self.raw_reply is None:
            return ""
        shown = shortened(self.raw_reply, 60)
        return f", e.g. the reply {json.dumps(shown, ensure_ascii=False)}"


def kind(result: CallResult) -> tuple[str, str, bool]:
    """(group key, advice, fatal) of a failed call."""
    if result.cause == "http":
        status = result.status
        if status in (401, 403):
            return (f"http {status}", f"check {result.key_env or 'OPENAI_API_KEY'}: this server "
                    "refused it", True)
        if status == 404:
            where = ("" if result.key_env not in (None, "OPENAI_API_KEY")
                     else ", and that --base-url ends in /v1 (e.g. http://localhost:8000/v1)")
            return ("http 404", f"check --model against the server's model names{where}", True)
        if status == 429:
            return ("http 429", "the server is limiting the rate: lower --concurrency or pass "
                    "--rpm", False)
        if status is not None and status >= 500:
            return (f"http {status}", "the server failed; it may be overloaded: lower "
                    "--concurrency", False)
        return (f"http {status}", "the server refused the request as sent", not result.retryable)
    if result.cause == "connection":
        return ("connection", "", True)  # its sentence already names the URL and what to check
    if result.cause == "timeout":
        return ("timeout", "raise --timeout or lower --concurrency", False)
    if result.cause == "cut_off":
        # Cut off again and again before any verdict: every reply runs past the limit (or the
        # model repeats itself); asking on only spends hours. Fatal like a wrong key.
        return ("cut_off", "raise --max-tokens, or use a model that ends its reply", True)
    if result.cause == "body":
        # A page from a proxy, a login wall or another service: every call will get it.
        return ("body: " + (result.error or "").split(" (")[0], "check that --base-url is the "
                "server's OpenAI-compatible address, ending in /v1 (a proxy or another service "
                "may be answering instead)", True)
    if result.cause == "reply":
        # One group per sentence, without its detail: "not valid JSON (Expecting value...)".
        key = "reply: " + (result.error or "").split(" (")[0]
        if not result.retryable:
            # A prompt's own library (RAGAS's instructor) retried already and still read
            # nothing: a model that fails so on the first chunks fails so on every one.
            return (key, "use a model that follows JSON instructions (a larger or "
                    "instruction-tuned one), or --prompt builtin, whose JSON the server enforces "
                    "where it can", True)
        return (key, REPLY_ADVICE, False)
    return (f"{result.cause}: {result.error}", "", False)


@dataclass(slots=True)
class Failures:
    """The failed calls of one run, grouped by kind."""

    _groups: dict[str, Group] = field(default_factory=dict)
    latest: str | None = None
    """The latest failure's error, for the progress line."""
    _streak: tuple[str, int] = ("", 0)

    def add(self, result: CallResult) -> None:
        """Count one failed call (a kind keeps the error and reply of its first call)."""
        key, advice, fatal = kind(result)
        group = self._groups.get(key)
        self._groups[key] = (replace(group, count=group.count + 1) if group is not None else
                             Group(key, 1, result.error or "no verdict",
                                   result.raw_reply if result.cause == "reply" else None,
                                   advice, fatal))
        self.latest = result.error or "no verdict"
        last, run = self._streak
        self._streak = (key, run + 1 if key == last else 1)

    def succeeded(self) -> None:
        """A verdict arrived: failures so far are not hopeless."""
        self._streak = ("", 0)

    def hopeless(self, judged: int) -> Group | None:
        """The fatal kind the run met FATAL_STREAK times in a row before any verdict, if any."""
        key, run = self._streak
        group = self._groups.get(key)
        if judged or run < FATAL_STREAK or group is None or not group.fatal:
            return None
        return group

    def groups(self) -> list[Group]:
        """Every kind with its count, most frequent first (ties in the order they happened)."""
        return sorted(self._groups.values(), key=lambda g: -g.count)
