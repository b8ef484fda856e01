"""`python -m mpiguide …`: the command line (mpiguide.cli)."""

import sys

from mpiguide.cli import main

sys.exit(main())
