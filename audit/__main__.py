"""``python -m audit …``: the command line (:mod:`audit.cli`)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
