"""A caller with four mistakes mypy reports (and the test asserts, line by line)."""

import numpy as np
import torch

import clamp_ffi_api
from clamp_api import scaled_clamp

# [caller_bad.begin]
x = torch.linspace(-2, 2, 9)
scaled_clamp(x, 2.0)                             # scale is keyword-only
scaled_clamp(x, scale="2")                       # a str is not a float
y: torch.Tensor = scaled_clamp(np.ones(4, np.float32))  # numpy in, numpy out
clamp_ffi_api.scaled_clamp(x, x, 2.0)            # the raw call needs all five
# [caller_bad.end]
