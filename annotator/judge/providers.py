"""Every provider a judge may name, and where its transport is: read by --provider's choices at
start-up, so it imports nothing (a transport and its client load when first used)."""

from __future__ import annotations

PROVIDERS: dict[str, str] = {
    "openai": "annotator.judge.openai_chat:OpenAIChat",
    "anthropic": "annotator.judge.anthropic_messages:AnthropicMessages",
}
"""Provider name -> ``module:Transport`` (judge/transport.py): a new provider is its module and
a line here."""
