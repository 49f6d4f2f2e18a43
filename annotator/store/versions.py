"""The schema's migration names, without sqlite-utils: what opening a session checks.

Opening a session only has to know whether its file is up to date; importing sqlite-utils (and
the migrations it runs) is needed only when it is not. tests/test_migrations.py checks these
names against store/migrations.py.
"""

from __future__ import annotations

MIGRATION_SET = "cp-annotator"
NAMES = ("m001_initial", "m002_calibration", "m003_call_details", "m004_judge_designs",
         "m005_batches", "m006_probes", "m007_unsure_and_reasons",
         "m008_attention_checks", "m009_chunk_ids", "m010_answer_kinds", "m011_grades", "m012_distractor",
         "m013_align", "m014_trust", "m015_epochs", "m016_team")
"""Every migration this version knows, in the order they run."""
