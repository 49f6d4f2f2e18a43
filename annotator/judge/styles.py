"""The prompt styles --prompt accepts: the one place a new prompt style is registered.

A new style is a template prompt (judge/template.py; a team writes one as a prompt file, see
judge/prompt_file.py) or one module with a class that has what judge/types.py's JudgePrompt
names, plus one entry in PROMPTS here; the client, the runner and the session need no change.
"""

from __future__ import annotations

from collections.abc import Callable

from annotator.judge.prompts import builtin, listwise
from annotator.judge.types import Against, JudgePrompt


def _ragas(against: Against) -> JudgePrompt:
    from annotator.judge.ragas_prompt import RagasPrompt  # loads ragas itself: only when asked

    return RagasPrompt(against)


PROMPTS: dict[str, Callable[[Against], JudgePrompt]] = {
    "builtin": builtin, "listwise": listwise, "ragas": _ragas}
"""Every prompt style, by the name --prompt takes."""


def make_prompt(style: str, against: Against) -> JudgePrompt:
    """The prompt of one style (a name in PROMPTS) against the reference or the response."""
    return PROMPTS[style](against)


STYLE_WORDS = {
    "builtin": "this project's wording, one request a chunk",
    "listwise": "this project's wording, one request a golden (all its chunks at once)",
    "ragas": "RAGAS 0.4's own ContextPrecision prompt, byte for byte (needs the ragas extra)",
}
"""What each style is, for 'annotator prompts'."""
