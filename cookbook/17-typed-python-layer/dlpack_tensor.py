"""The static type of "a tensor tvm_ffi accepts": anything that speaks DLPack."""

from typing import Protocol, runtime_checkable


# [dlpack_tensor_protocol.begin]
@runtime_checkable  # isinstance() works too, for tests
class DLPackTensor(Protocol):
    """numpy arrays, torch tensors, tvm_ffi.Tensor, JAX arrays, ...: they all have this method."""

    def __dlpack_device__(self) -> object: ...
# [dlpack_tensor_protocol.end]
