#!/usr/bin/env python3
"""CPU dispatch toolkit CLI. See `python tools/dispatchgen.py --help`.

The engine is the dispatchkit package beside this file (standard library only).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dispatchkit.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
