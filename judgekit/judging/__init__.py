"""Judging a study: the command checked once, clients, panels, own prompts, the Batch API."""
