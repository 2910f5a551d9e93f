"""``cookbook_build`` in the checkout: ``ffi_cookbook.build`` under the name the recipes' notebooks import.

A recipe's download carries a copy of ffi_cookbook/build.py as cookbook_build.py, and the
notebook imports that name, so a page shows the very code its download runs. In the
checkout, python/ is on the venv's path (see the Makefile) and this module is the package's.
It is not part of the ffi-cookbook wheel.
"""

import sys

import ffi_cookbook.build

sys.modules[__name__] = ffi_cookbook.build
