// The GPU code of this recipe: y = factor * x for float32, one thread per element.
//
// No #include and extern "C": the same text compiles ahead of time with nvcc
// (CMakeLists.txt, into a fatbin embedded in the libraries) and at run time
// with NVRTC (nvrtc_compile.py), and the kernel keeps its plain name,
// "scale_f32", in both binaries, where the launchers look it up.
// [scale_kernel.begin]
extern "C" __global__ void scale_f32(const float* x, float* y, float factor, long long n) {
  long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = factor * x[i];
}
// [scale_kernel.end]
