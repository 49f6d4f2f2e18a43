"""The prompt styles --prompt accepts: the one place a new prompt style is registered.

A new style is a template prompt (judge/template.py; a team writes one as a prompt file, see
judge/prompt_file.py) or one module with a class that has what judge/types.py's JudgePrompt
names, plus one entry in PROMPTS here; the client, the runner and the session need no change.
"""

from __future__ import annotations

from collections.abc import Callable

from annotator.judge.types import Against, JudgePrompt

# Each style is loaded when asked for: every command reads the names (--prompt's choices),
# and the templates behind them cost more to load than most commands take.


def _builtin(against: Against) -> JudgePrompt:
    from annotator.judge.prompts import builtin

    return builtin(against)


def _listwise(against: Against) -> JudgePrompt:
    from annotator.judge.prompts import listwise

    return listwise(against)


def _ragas(against: Against) -> JudgePrompt:
    from annotator.judge.ragas_prompt import RagasPrompt  # loads ragas itself

    return RagasPrompt(against)


PROMPTS: dict[str, Callable[[Against], JudgePrompt]] = {
    "builtin": _builtin, "listwise": _listwise, "ragas": _ragas}
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
