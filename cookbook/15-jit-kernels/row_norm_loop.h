// The row-norm loop, specialised at compile time: out[r] = sqrt(sum_i x[r][i]^2).
// N (the row length) and Unroll (independent partial sums per row) are template
// parameters, so the compiler sees fixed trip counts and can unroll and vectorise.
// No binding code here: the tvm_ffi entry and the torch extension share this file.
#ifndef COOKBOOK_ROW_NORM_LOOP_H_
#define COOKBOOK_ROW_NORM_LOOP_H_

#include <cmath>
#include <cstdint>
#include <type_traits>

namespace row_norm {

// [row_norm_loop.begin]
template <typename T, int N, int Unroll>
void RowNormLoop(const T* x, T* out, int64_t rows) {
  static_assert(std::is_floating_point_v<T>, "float or double");
  static_assert(N > 0 && Unroll > 0 && N % Unroll == 0, "Unroll must divide N");
  for (int64_t r = 0; r < rows; ++r) {
    const T* row = x + r * N;
    T partial[Unroll] = {};  // Unroll chains of additions run side by side
    for (int i = 0; i < N; i += Unroll) {
      for (int u = 0; u < Unroll; ++u) partial[u] += row[i + u] * row[i + u];
    }
    T sum = 0;
    for (int u = 0; u < Unroll; ++u) sum += partial[u];
    out[r] = std::sqrt(sum);
  }
}
// [row_norm_loop.end]

}  // namespace row_norm

#endif  // COOKBOOK_ROW_NORM_LOOP_H_
