"""`python -m ffi_cookbook`: the ffi-cookbook command line (see ffi_cookbook.cli)."""

import sys

from ffi_cookbook.cli import main

sys.exit(main())
