#!/usr/bin/env python3
"""`python -m dispatchkit` and `python path/to/dispatchkit/__main__.py`: dispatchgen.

Run by path (a checkout, or the subproject's find_program override) the
package is not on sys.path yet: its parent directory goes first, so this
copy of the toolkit is the one that runs.
"""

import sys
from pathlib import Path

if not __package__:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dispatchkit.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
