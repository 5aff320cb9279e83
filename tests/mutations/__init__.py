"""Deliberate mutations of the defining lines (`catalogue.json`) and their runner (`run.py`)."""
