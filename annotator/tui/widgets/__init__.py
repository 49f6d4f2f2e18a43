"""Widgets of the annotation app."""
