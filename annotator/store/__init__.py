"""Storage: the session, in a SQLite file or a PostgreSQL database. Only this package speaks
SQL."""
