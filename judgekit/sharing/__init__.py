"""Sharing a study: export to a bundle, and verify a bundle offline without trusting it."""
