"""The Textual annotation app: a thin shell over annotator.review, annotator.compare and friends."""
