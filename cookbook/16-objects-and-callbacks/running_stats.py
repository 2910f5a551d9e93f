"""Python side of libobjects.so: the RunningStats class and the global function.

Loading the library runs its registration (the static init block); the class
below attaches a Python name and docs to the type key registered in C++, so
``RunningStats(4)`` calls the C++ constructor and the C++ methods appear as
Python methods and read-only attributes.
"""

from pathlib import Path

import tvm_ffi

HERE = Path(__file__).resolve().parent
LIBRARY = HERE / "build" / "libobjects.so"  # built by the README's cmake commands

# [running_stats_python.begin]
library = tvm_ffi.load_module(str(LIBRARY))  # registers cookbook.RunningStats


@tvm_ffi.register_object("cookbook.RunningStats")
class RunningStats(tvm_ffi.Object):
    """Running mean and variance per feature, over [batch, features] float32 batches."""


live_count = tvm_ffi.get_global_func("cookbook.running_stats_live_count")
# [running_stats_python.end]
