# Read by every CMake configure that `make` starts (CMAKE_TOOLCHAIN_FILE, set in the Makefile),
# never by a reader's build: the CUDA compiler the Makefile found, so that check_language(CUDA)
# skips the probe project it would configure to find one (3 of a recipe's 7 configure seconds).
# A folder configured with its own -DCMAKE_CUDA_COMPILER (OFF in the sanitizer run) keeps it.
if(NOT DEFINED CMAKE_CUDA_COMPILER AND DEFINED ENV{FFI_COOKBOOK_NVCC})
  set(CMAKE_CUDA_COMPILER "$ENV{FFI_COOKBOOK_NVCC}" CACHE FILEPATH "CUDA compiler (found by make)")
endif()
