"""The rules every score obeys, which the report and every workflow read alike: which labels
are the truth, dev/test splits, the sampling design, attention checks, never scoring a judge on
what it saw, gullibility probes, and which metadata key names a golden's system."""
