"""gpukernels: kernels compiled into libgpukernels.so, which ships inside this package."""

from pathlib import Path

import tvm_ffi

__all__ = ["library_path", "scale", "scale_cuda", "cuda_device_count"]

_LIBRARY = Path(__file__).resolve().parent / "libgpukernels.so"
# load_module needs a path with a slash; an absolute path has one.
_module = tvm_ffi.load_module(str(_LIBRARY))
_CPU, _CUDA = 1, 2  # DLPack device types


def library_path() -> Path:
    """The shared library this package loaded."""
    return _LIBRARY


def scale(x, y, alpha: float) -> None:
    """Write ``alpha * x`` into ``y``: contiguous float32 tensors of one shape on one device.

    CPU and CUDA tensors of any DLPack framework; the entry is chosen by ``x``'s device.
    """
    if not hasattr(x, "__dlpack_device__"):
        raise TypeError(f"argument 'x': expected a DLPack tensor, got {type(x).__name__}")
    if x.__dlpack_device__()[0] == _CUDA:
        _module.gpukernels_scale_cuda(x, y, alpha)
    else:
        _module.gpukernels_scale_cpu(x, y, alpha)  # names the device when it is not the CPU


def scale_cuda(x, y, alpha: float) -> None:
    """The CUDA entry itself: a ValueError naming the argument for a tensor not on a GPU."""
    _module.gpukernels_scale_cuda(x, y, alpha)


def cuda_device_count() -> int:
    """GPUs the CUDA runtime sees; RuntimeError with CUDA's error name when it cannot look."""
    return _module.gpukernels_cuda_device_count()
