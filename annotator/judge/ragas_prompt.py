"""RAGAS's own ContextPrecision prompt, loaded from the installed ragas package (never copied)."""

from __future__ import annotations

from annotator.errors import AnnotatorError


def ragas_unavailable() -> AnnotatorError:
    """The error to show when the RAGAS prompt is asked for."""
    try:
        import ragas  # noqa: F401
    except ImportError:
        return AnnotatorError(
            "The ragas prompt needs RAGAS itself, loaded at run time: pip install "
            "'cp-annotator[ragas]'. Until then, use --prompt builtin.")
    return AnnotatorError(
        "The ragas prompt is not available in this version of cp-annotator (see the README); "
        "use --prompt builtin.")
