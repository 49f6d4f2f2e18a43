"""The Textual annotation app: a thin shell over annotator.review and the stats it reads."""
