/* Tensors inside a TVMFFIAny, in plain C99: the four conversions.
 *
 * Return convention, for every function here: 0 on success; -1 on failure,
 * with the error raised through TVMFFIErrorSetRaisedFromCStr, exactly like a
 * TVMFFISafeCallType function. The caller takes it with
 * TVMFFIErrorMoveFromRaised and releases it with TVMFFIObjectDecRef. */
#ifndef CONCEPTS_TENSOR_ANY_H_
#define CONCEPTS_TENSOR_ANY_H_

#include <dlpack/dlpack.h>
#include <tvm/ffi/c_api.h>

/* [tensor_any_api.begin] */
/* Borrow the DLTensor an Any refers to (either tensor kind). No reference taken. */
int AnyToTensorView(const TVMFFIAny* value, DLTensor** out);

/* Take a new strong reference to the tensor object an Any holds. Fails for a
 * bare DLTensor*: nothing owns it, so there is nothing to keep alive. */
int AnyToOwnedTensor(const TVMFFIAny* value, TVMFFIObjectHandle* out);

/* Store a tensor object in an Any that owns one new reference to it. */
int OwnedTensorToAny(TVMFFIObjectHandle tensor, TVMFFIAny* out);

/* Store a borrowed DLTensor* in an Any used as a view (an AnyView). */
int TensorViewToAny(DLTensor* view, TVMFFIAny* out);
/* [tensor_any_api.end] */

#endif /* CONCEPTS_TENSOR_ANY_H_ */
