"""Rewrite the config key tables of docs/config.md and config/README.md from the descriptions
in the campaign schema (src/mpiguide/data/schemas/config.schema.yaml), their one source.

With --check nothing is written: exit 1, naming each file that differs from what the schema
generates.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if a file differs"
    )
    args = parser.parse_args()
    # This checkout's package and schema, not whichever mpiguide is installed.
    sys.path.insert(0, str(REPO / "src"))
    from mpiguide.campaign.config_keys import generated

    drifted = []
    for document, text in generated(REPO).items():
        path = REPO / document
        if path.read_text(encoding="utf-8") == text:
            continue
        if args.check:
            drifted.append(document)
            print(
                f"{document}: its key tables differ from config.schema.yaml's descriptions; "
                "run python scripts/config_docs.py",
                file=sys.stderr,
            )
        else:
            path.write_text(text, encoding="utf-8")
            print(f"rewrote {document}")
    return 1 if drifted else 0


if __name__ == "__main__":
    sys.exit(main())
