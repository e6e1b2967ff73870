"""``python -m judgekit``: the command line."""

import sys

from judgekit.cli.main import main

sys.exit(main())
