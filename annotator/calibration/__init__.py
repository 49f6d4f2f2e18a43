"""Choosing and keeping a judge against the calibration set: examples drawn for its prompt,
trust thresholds, re-checks over time, and the disagreements align's optimizer is shown."""
