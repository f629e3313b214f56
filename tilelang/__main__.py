"""``python -m tilelang``: the ``tilelang`` command line (the same as the installed ``tilelang`` script)."""

import sys

from tilelang.cli import main

if __name__ == "__main__":
    sys.exit(main())
