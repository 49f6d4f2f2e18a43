"""cp-annotator: check an LLM judge's context-precision verdicts against people."""
