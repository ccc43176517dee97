"""``python -m tfsql.cli``: the same as the ``tfsql`` command (see :mod:`tfsql.cli`)."""

import sys

from tfsql.cli import main

if __name__ == "__main__":
    sys.exit(main())
