"""ClampConfig: the Python class of the C++ type cookbook.ClampConfig.

Import this module after loading libclamp_config.so, which registers the type:
c_class finds it by its key and reads its fields from the library's reflection.
"""

from typing import Optional

import tvm_ffi
from tvm_ffi.dataclasses import c_class


# [clamp_config_class.begin]
@c_class("cookbook.ClampConfig", frozen=True, eq=True, unsafe_hash=True)
class ClampConfig(tvm_ffi.Object):
    """Options of scaled_clamp: y = clamp(x * scale, low, high); None leaves a side open."""

    scale: float
    low: Optional[float]
    high: Optional[float]
# [clamp_config_class.end]
