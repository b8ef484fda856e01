"""`python -m mpiguide …`: the command line (mpiguide.cli)."""

from mpiguide.cli import run

run()
