/* The four tensor <-> TVMFFIAny conversions, written against the C ABI alone.
 * Return convention: 0 success, -1 failure with the error raised (tensor_any.h). */
#include "tensor_any.h"

#include <stddef.h>

/* [tensor_any_to_view.begin] */
int AnyToTensorView(const TVMFFIAny* value, DLTensor** out) {
  if (value->type_index == kTVMFFIDLTensorPtr) {
    *out = (DLTensor*)value->v_ptr; /* already a view */
    return 0;
  }
  if (value->type_index == kTVMFFITensor) {
    /* A tensor object is laid out as { TVMFFIObject header, DLTensor }. */
    *out = (DLTensor*)((char*)value->v_obj + sizeof(TVMFFIObject));
    return 0;
  }
  TVMFFIErrorSetRaisedFromCStr("TypeError", "AnyToTensorView: the value is not a tensor");
  return -1;
}
/* [tensor_any_to_view.end] */

/* [tensor_any_to_owned.begin] */
int AnyToOwnedTensor(const TVMFFIAny* value, TVMFFIObjectHandle* out) {
  if (value->type_index != kTVMFFITensor) {
    /* A DLTensor* has no reference count and no owner: a view never becomes owning. */
    TVMFFIErrorSetRaisedFromCStr("TypeError",
                                 "AnyToOwnedTensor: expected a tensor object, not a view");
    return -1;
  }
  if (TVMFFIObjectIncRef(value->v_obj) != 0) return -1; /* the runtime raised it */
  *out = value->v_obj;
  return 0;
}
/* [tensor_any_to_owned.end] */

/* [tensor_any_from_owned.begin] */
int OwnedTensorToAny(TVMFFIObjectHandle tensor, TVMFFIAny* out) {
  if (tensor == NULL || ((TVMFFIObject*)tensor)->type_index != kTVMFFITensor) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "OwnedTensorToAny: expected a tensor object");
    return -1;
  }
  if (TVMFFIObjectIncRef(tensor) != 0) return -1;
  out->type_index = kTVMFFITensor;
  out->zero_padding = 0;
  out->v_int64 = 0; /* clear all 8 bytes before storing a pointer in them */
  out->v_obj = (TVMFFIObject*)tensor;
  return 0;
}
/* [tensor_any_from_owned.end] */

/* [tensor_any_from_view.begin] */
int TensorViewToAny(DLTensor* view, TVMFFIAny* out) {
  if (view == NULL) {
    TVMFFIErrorSetRaisedFromCStr("ValueError", "TensorViewToAny: the DLTensor* is NULL");
    return -1;
  }
  out->type_index = kTVMFFIDLTensorPtr; /* no reference count to touch */
  out->zero_padding = 0;
  out->v_int64 = 0;
  out->v_ptr = view;
  return 0;
}
/* [tensor_any_from_view.end] */
