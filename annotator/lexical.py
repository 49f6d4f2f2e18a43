"""How much of the question a chunk repeats: the share of the question's content words that
appear in the chunk, the overlap a judge fooled by keywords would reward.

Words are runs of letters and digits (``\\w+``), compared lower-cased; a script written without
spaces between words (Chinese, Japanese, Thai) reads as a few long words, so its overlap is coarse.
"""

from __future__ import annotations

import math
import re

WORD = re.compile(r"\w+")
_STOP_WORDS_TEXT = """
a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further had
has have having he her here hers herself him himself his how i if in into is it its itself just
me more most my myself no nor not now of off on once only or other our ours ourselves out over
own same she should so some such than that the their theirs them themselves then there these
they this those through to too under until up very was we were what when where which while who
whom why will with would you your yours yourself yourselves
"""
STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())
"""Words too common to say whether a chunk is on the question's topic (English)."""


def content_words(question: str) -> frozenset[str]:
    """The question's words that carry its topic: lower-cased, without stop words and single
    characters."""
    return frozenset(w for w in WORD.findall(question.lower())
                     if len(w) > 1 and w not in STOP_WORDS)


def overlap(question_words: frozenset[str], text: str) -> float:
    """The share of ``question_words`` found as whole words in ``text`` (NaN when the question
    has none): as if the lower-cased text were split into ``WORD`` runs, without splitting it
    (a report reads a million chunks)."""
    if not question_words:
        return math.nan
    lowered = text.lower()
    return sum(1 for word in question_words
               if word in lowered and _whole_word(word, lowered)) / len(question_words)


def _is_word_char(char: str) -> bool:
    """Whether ``\\w`` matches the character (re's rule: alphanumeric, or the underscore)."""
    return char.isalnum() or char == "_"


def _whole_word(word: str, text: str) -> bool:
    """Whether ``word`` (itself a run of word characters) stands in ``text`` as a whole run:
    no word character right before or after it."""
    end = len(word)
    at = text.find(word)
    while at != -1:
        if ((at == 0 or not _is_word_char(text[at - 1]))
                and (at + end == len(text) or not _is_word_char(text[at + end]))):
            return True
        at = text.find(word, at + 1)
    return False
