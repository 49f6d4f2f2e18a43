"""Storage: the session file. Only this package speaks SQL."""
