/* The same functions as plain C taking raw pointers, for ctypes. The caller
 * passes addresses and a length; there is no dtype, shape or device to check. */
#include <stdint.h>

/* [ctypes_functions.begin] */
void overhead_c_noop1(void* a) { (void)a; }
void overhead_c_noop3(void* a, void* b, void* c) { (void)a; (void)b; (void)c; }
void overhead_c_noop8(void* a, void* b, void* c, void* d, void* e, void* f, void* g, void* h) {
  (void)a; (void)b; (void)c; (void)d; (void)e; (void)f; (void)g; (void)h;
}
void overhead_c_add(const float* a, const float* b, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}
/* [ctypes_functions.end] */
