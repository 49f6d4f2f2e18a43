"""Statistics: pure functions of labels and verdicts (no storage, no network, no screens)."""
