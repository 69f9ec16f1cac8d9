"""The reports pipeline: reads traces only."""
