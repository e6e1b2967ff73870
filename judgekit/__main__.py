"""``python -m judgekit``: the command line."""

from judgekit.workflows.cli import main

main()
