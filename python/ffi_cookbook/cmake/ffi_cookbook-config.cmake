# ffi_cookbook CMake package: builds the recipe library (runtime/) and the test
# probes from the checkout or an installed wheel. Recipe folders do not use it:
# each builds with tvm_ffi's own CMake package alone, so it can be copied out.
#
#   find_package(ffi_cookbook CONFIG REQUIRED)   # after setting ffi_cookbook_DIR
#   ffi_cookbook_add_library(add_one CPU add_one_cpu.cc CUDA add_one_cuda.cu)
#
# It finds tvm_ffi through the same Python (pass -DPython_EXECUTABLE=...),
# adds the helper headers, and builds CUDA / NVSHMEM sources only when the
# toolchain is there. Cache options:
#   FFI_COOKBOOK_CUDA      AUTO | ON | OFF   (AUTO: build CUDA sources when nvcc is found)
#   FFI_COOKBOOK_NVSHMEM   AUTO | ON | OFF   (AUTO: when nvidia-nvshmem-cu13 headers are found)
#   FFI_COOKBOOK_SANITIZE  "" | address | undefined | address,undefined
#   CMAKE_CUDA_ARCHITECTURES defaults to 80 90 (set explicitly: no GPU to detect)
#   CMAKE_BUILD_TYPE         defaults to Release
include_guard(GLOBAL)

# Kernels built here are run and measured: optimise unless the caller chose a
# build type (an empty CMAKE_BUILD_TYPE would mean no -O flag at all).
if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  set(CMAKE_BUILD_TYPE Release CACHE STRING "Build type; the cookbook defaults to Release" FORCE)
endif()

# Every build through this package records what it compiled; the snippet
# checker reads compile_commands.json to know which shown files really build.
set(CMAKE_EXPORT_COMPILE_COMMANDS ON)

set(FFI_COOKBOOK_CUDA AUTO CACHE STRING "Build CUDA sources: AUTO, ON or OFF")
set(FFI_COOKBOOK_NVSHMEM AUTO CACHE STRING "Build NVSHMEM sources: AUTO, ON or OFF")
set(FFI_COOKBOOK_SANITIZE "" CACHE STRING "Sanitizers for -fsanitize=, e.g. address,undefined")

# --- Python, tvm_ffi and our headers --------------------------------------
find_package(Python COMPONENTS Interpreter REQUIRED)
function(_ffi_cookbook_query out)
  execute_process(COMMAND "${Python_EXECUTABLE}" ${ARGN}
                  OUTPUT_VARIABLE value OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "ffi_cookbook: '${Python_EXECUTABLE} ${ARGN}' failed:\n${err}\n"
                        "Pass -DPython_EXECUTABLE=<python with apache-tvm-ffi installed>.")
  endif()
  set(${out} "${value}" PARENT_SCOPE)
endfunction()

_ffi_cookbook_query(tvm_ffi_ROOT -m tvm_ffi.config --cmakedir)
find_package(tvm_ffi CONFIG REQUIRED)

# The helper headers, found from this file's own location (no Python query: a
# wheel build's isolated environment cannot import ffi_cookbook):
#   installed wheel   ffi_cookbook/cmake/ -> ffi_cookbook/include/
#   checkout          python/ffi_cookbook/cmake/ -> include/
foreach(_candidate "${CMAKE_CURRENT_LIST_DIR}/../include" "${CMAKE_CURRENT_LIST_DIR}/../../../include")
  if(NOT FFI_COOKBOOK_INCLUDE_DIR AND EXISTS "${_candidate}/ffi_cookbook/check.h")
    get_filename_component(FFI_COOKBOOK_INCLUDE_DIR "${_candidate}" ABSOLUTE)
  endif()
endforeach()
if(NOT FFI_COOKBOOK_INCLUDE_DIR)
  message(FATAL_ERROR "ffi_cookbook: helper headers not found next to ${CMAKE_CURRENT_LIST_DIR}")
endif()

# --- CUDA -----------------------------------------------------------------
set(FFI_COOKBOOK_HAS_CUDA OFF)
if(NOT FFI_COOKBOOK_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # Guarded: the project including this package may have set it as a plain variable, which
    # set(CACHE) would remove under the policies of CMake 3.18 (CMP0126).
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 80 90 CACHE STRING "GPU architectures to compile for")
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(FFI_COOKBOOK_HAS_CUDA ON)
  elseif(FFI_COOKBOOK_CUDA STREQUAL "ON")
    message(FATAL_ERROR "ffi_cookbook: FFI_COOKBOOK_CUDA=ON but no CUDA compiler was found")
  endif()
endif()

# --- NVSHMEM (the nvidia-nvshmem-cu13 wheel) --------------------------------
set(FFI_COOKBOOK_HAS_NVSHMEM OFF)
if(FFI_COOKBOOK_HAS_CUDA AND NOT FFI_COOKBOOK_NVSHMEM STREQUAL "OFF")
  execute_process(
    COMMAND "${Python_EXECUTABLE}" -c
            "import nvidia.nvshmem as m, os; print(os.path.dirname(m.__file__) if m.__file__ else list(m.__path__)[0])"
    OUTPUT_VARIABLE _nvshmem_root OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE _nvshmem_rc ERROR_QUIET)
  if(_nvshmem_rc EQUAL 0 AND EXISTS "${_nvshmem_root}/include/nvshmem.h")
    set(FFI_COOKBOOK_NVSHMEM_ROOT "${_nvshmem_root}")
    set(FFI_COOKBOOK_HAS_NVSHMEM ON)
  endif()
endif()
if(FFI_COOKBOOK_NVSHMEM STREQUAL "ON" AND NOT FFI_COOKBOOK_HAS_NVSHMEM)
  message(FATAL_ERROR "ffi_cookbook: FFI_COOKBOOK_NVSHMEM=ON but CUDA or the "
                      "nvidia-nvshmem-cu13 headers were not found")
endif()

message(STATUS "ffi_cookbook: cpu=ON cuda=${FFI_COOKBOOK_HAS_CUDA} "
               "nvshmem=${FFI_COOKBOOK_HAS_NVSHMEM} sanitize='${FFI_COOKBOOK_SANITIZE}'")

# ffi_cookbook_add_library(<target> [CPU src...] [CUDA src...] [NVSHMEM src...])
# Builds one shared library. CUDA and NVSHMEM sources are skipped (with a
# message) when their toolchain was not found. Defines FFI_COOKBOOK_HAS_CUDA /
# FFI_COOKBOOK_HAS_NVSHMEM as 0/1 for the sources.
function(ffi_cookbook_add_library target)
  cmake_parse_arguments(ARG "" "" "CPU;CUDA;NVSHMEM" ${ARGN})
  set(sources ${ARG_CPU})
  if(FFI_COOKBOOK_HAS_CUDA)
    list(APPEND sources ${ARG_CUDA})
  endif()
  if(FFI_COOKBOOK_HAS_NVSHMEM)
    list(APPEND sources ${ARG_NVSHMEM})
  endif()
  add_library(${target} SHARED ${sources})
  target_compile_features(${target} PRIVATE cxx_std_17)
  target_include_directories(${target} PRIVATE "${FFI_COOKBOOK_INCLUDE_DIR}")
  target_link_libraries(${target} PRIVATE tvm_ffi::header tvm_ffi::shared)
  set_target_properties(${target} PROPERTIES CXX_VISIBILITY_PRESET hidden
                                             CUDA_VISIBILITY_PRESET hidden)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra>)
  target_compile_definitions(${target} PRIVATE
    FFI_COOKBOOK_HAS_CUDA=$<BOOL:${FFI_COOKBOOK_HAS_CUDA}>
    FFI_COOKBOOK_HAS_NVSHMEM=$<BOOL:${FFI_COOKBOOK_HAS_NVSHMEM}>)
  if(FFI_COOKBOOK_HAS_CUDA AND (ARG_CUDA OR (ARG_NVSHMEM AND FFI_COOKBOOK_HAS_NVSHMEM)))
    target_link_libraries(${target} PRIVATE CUDA::cudart)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-fPIC>)
  endif()
  if(FFI_COOKBOOK_HAS_NVSHMEM AND ARG_NVSHMEM)
    # NVSHMEM device code needs relocatable device code and a device link step.
    set_target_properties(${target} PROPERTIES CUDA_SEPARABLE_COMPILATION ON
                                               CUDA_RESOLVE_DEVICE_SYMBOLS ON)
    target_include_directories(${target} PRIVATE "${FFI_COOKBOOK_NVSHMEM_ROOT}/include")
    target_link_directories(${target} PRIVATE "${FFI_COOKBOOK_NVSHMEM_ROOT}/lib")
    target_link_libraries(${target} PRIVATE nvshmem_device -l:libnvshmem_host.so.3)
  endif()
  if(FFI_COOKBOOK_SANITIZE)
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=${FFI_COOKBOOK_SANITIZE} -fno-omit-frame-pointer>)
    target_link_options(${target} PRIVATE -fsanitize=${FFI_COOKBOOK_SANITIZE})
  endif()
  if(NOT ARG_CUDA STREQUAL "" AND NOT FFI_COOKBOOK_HAS_CUDA)
    message(STATUS "ffi_cookbook: ${target}: CUDA sources skipped (no nvcc)")
  endif()
endfunction()
