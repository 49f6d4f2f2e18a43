"""The LLM judge: prompts, one call, rate limiting, and the runner that judges a session."""
