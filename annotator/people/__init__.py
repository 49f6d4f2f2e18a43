"""The people's side: one person's review, settling disputes, who is on which screen, the
team's picture, and merging people's files."""
