"""``python -m annotator`` runs the command line."""

from annotator.cli import main

main()
