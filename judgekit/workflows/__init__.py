"""Workflows on top of the library: the CLI, demo, paper, bench, study folders, client choice.

Nothing below this layer imports it (checked by ``lint-imports``; see docs/architecture.md).
"""
