#!/usr/bin/env python3
"""`python -m dispatchkit` and `python path/to/dispatchkit/__main__.py`: dispatchgen.

Run by path (a checkout, or the subproject's find_program override) the
package is not on sys.path yet: its parent directory goes first, so this
copy of the toolkit is the one that runs.
"""

import sys

if sys.version_info < (3, 9):  # before any import this Python cannot parse: one line
    sys.stderr.write("dispatchgen: error: needs Python >= 3.9 (%s is %d.%d)\n"
                     % (sys.executable, sys.version_info[0], sys.version_info[1]))
    sys.exit(2)

from pathlib import Path  # noqa: E402

if not __package__:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dispatchkit.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
