"""The agreement report: judge versus people, chunk by chunk and golden by golden."""
