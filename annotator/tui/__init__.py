"""The Textual annotation app: a thin shell over annotator.people.review and the stats it reads."""
