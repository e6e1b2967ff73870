"""``python -m judgekit``: the command line."""

from judgekit.cli import main

main()
