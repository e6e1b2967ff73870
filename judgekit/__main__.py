"""``python -m judgekit``: the command line."""

import sys

from judgekit.workflows.cli import main

sys.exit(main())
