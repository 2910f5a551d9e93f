/* Calls weighted_sum_cpu from C99 through the tvm_ffi C ABI: no Python, no C++.
 * Usage: caller_c <path to libweighted_sum.so>. Exits 0 when every result is as expected. */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <tvm/ffi/c_api.h>

/* [c_pack_args.begin] */
/* A borrowed tensor travels as a DLTensor pointer; a double as kTVMFFIFloat. */
static void PackArgs(TVMFFIAny args[2], DLTensor* x, double w) {
  memset(args, 0, 2 * sizeof(TVMFFIAny));
  args[0].type_index = kTVMFFIDLTensorPtr;
  args[0].v_ptr = x;
  args[1].type_index = kTVMFFIFloat;
  args[1].v_float64 = w;
}
/* [c_pack_args.end] */

/* [c_report_error.begin] */
/* Take the error the callee raised (we own it now), print kind and message, release it. */
static void PrintRaisedError(void) {
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  /* The error cell follows the object header; the C++ helper for this is C++-only. */
  const TVMFFIErrorCell* cell = (const TVMFFIErrorCell*)((char*)err + sizeof(TVMFFIObject));
  printf("error: %.*s: %.*s\n", (int)cell->kind.size, cell->kind.data, (int)cell->message.size,
         cell->message.data);
  TVMFFIObjectDecRef(err);
}
/* [c_report_error.end] */

/* [c_call.begin] */
/* Call once; 0 and *out set on success, -1 after printing the raised error. */
static int CallWeightedSum(TVMFFISafeCallType fn, DLTensor* x, double w, double* out) {
  TVMFFIAny args[2];
  TVMFFIAny result;
  PackArgs(args, x, w);
  memset(&result, 0, sizeof(result));
  result.type_index = kTVMFFINone; /* the ABI requires this before the call */
  if (fn(NULL, args, 2, &result) != 0) {
    PrintRaisedError();
    return -1;
  }
  if (result.type_index != kTVMFFIFloat) return -1;
  *out = result.v_float64;
  return 0;
}
/* [c_call.end] */

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s <path to libweighted_sum.so>\n", argv[0]);
    return 2;
  }
  /* [c_lookup.begin] */
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    fprintf(stderr, "dlopen failed: %s\n", dlerror());
    return 1;
  }
  TVMFFISafeCallType fn;
  *(void**)(&fn) = dlsym(lib, "__tvm_ffi_weighted_sum_cpu"); /* POSIX idiom for a function */
  /* [c_lookup.end] */
  if (fn == NULL) {
    fprintf(stderr, "symbol not found: %s\n", dlerror());
    return 1;
  }
  /* [c_tensor.begin] */
  float values[6] = {1, 2, 3, 4, 5, 6};
  int64_t shape[2] = {2, 3};
  DLTensor x = {0};
  x.data = values;
  x.device.device_type = kDLCPU;
  x.ndim = 2;
  x.dtype.code = kDLFloat;
  x.dtype.bits = 32;
  x.dtype.lanes = 1;
  x.shape = shape;
  x.strides = NULL; /* NULL strides mean compact row-major */
  /* [c_tensor.end] */
  double sum = 0.0;
  if (CallWeightedSum(fn, &x, 0.5, &sum) != 0 || sum != 10.5) return 1;
  printf("weighted_sum_cpu(x, 0.5) = %g\n", sum);
  /* [c_bad_input.begin] */
  /* Described as int32, the buffer is rejected (TypeError) before it is read ... */
  x.dtype.code = kDLInt;
  if (CallWeightedSum(fn, &x, 0.5, &sum) != -1) return 1;
  /* ... and so is a float32 tensor that claims to live on a GPU (ValueError). */
  x.dtype.code = kDLFloat;
  x.device.device_type = kDLCUDA;
  if (CallWeightedSum(fn, &x, 0.5, &sum) != -1) return 1;
  /* [c_bad_input.end] */
  dlclose(lib);
  return 0;
}
