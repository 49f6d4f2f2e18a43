"""Counting a request's prompt tokens before it is sent (for --dry-run).

Exact for OpenAI's models when an encoding is installed that needs no download: bpe-openai
(the ``tokens`` extra bundles OpenAI's encodings), or tiktoken with its encodings cached.
Otherwise about 4 characters a token, OpenAI's own rule of thumb for English: within about 10%
on prose like the sample sessions', further off for code or other scripts.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Sequence

PER_MESSAGE = 4
"""Tokens a chat message costs beyond its content (role and separators), as OpenAI counts."""
PER_REQUEST = 3
"""Tokens every reply is primed with."""
CHARS_PER_TOKEN = 4.0


@functools.cache
def _encoder() -> tuple[str, Callable[[str], int]] | None:
    """(what counts, a function counting a text's tokens), or None: approximate."""
    try:
        with warnings.catch_warnings():  # its data loader uses a deprecated importlib call
            warnings.simplefilter("ignore", DeprecationWarning)
            import bpe_openai  # type: ignore[import-untyped]

            encoding = bpe_openai.get_encoding("o200k_base")
        return "o200k_base (bpe-openai)", lambda text: len(encoding.encode(text))
    except Exception:  # not installed, or its data did not load: try the next
        pass
    try:
        import tiktoken

        tik = tiktoken.get_encoding("o200k_base")  # raises offline unless cached
        return "o200k_base (tiktoken)", lambda text: len(tik.encode(text, disallowed_special=()))
    except Exception:
        return None


def method(*, approximate: bool = False) -> str:
    """How tokens are counted, for the dry run's output (``approximate``: a provider whose
    tokenizer is not OpenAI's, so the rule of thumb counts)."""
    found = None if approximate else _encoder()
    return found[0] if found else f"about {CHARS_PER_TOKEN:g} characters a token"


def exact() -> bool:
    """Whether counts come from a real encoding."""
    return _encoder() is not None


def text_tokens(text: str, *, approximate: bool = False) -> int:
    """Tokens in one text."""
    found = None if approximate else _encoder()
    if found is None:
        return round(len(text) / CHARS_PER_TOKEN)
    return found[1](text)


def prompt_tokens(messages: Sequence[dict[str, str]], *, approximate: bool = False) -> int:
    """Prompt tokens of one chat request's messages."""
    return PER_REQUEST + sum(PER_MESSAGE + text_tokens(m.get("content") or "",
                                                      approximate=approximate)
                             for m in messages)
