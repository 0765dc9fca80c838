"""Whole runs end to end: the local model, an install, reliability under faults."""
