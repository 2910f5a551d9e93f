"""A caller mypy accepts: keywords, defaults, an output of the input's kind."""

import numpy as np
import numpy.typing as npt
import torch

from clamp_api import scaled_clamp

# [caller_ok.begin]
x = torch.linspace(-2, 2, 9)
y: torch.Tensor = scaled_clamp(x, scale=2.0, high=1.0)  # a new torch tensor
scaled_clamp(x, low=0.0, out=y)                          # into an existing one
a: npt.NDArray[np.float32] = scaled_clamp(np.ones(4, np.float32))
# [caller_ok.end]
