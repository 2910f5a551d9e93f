# Read by every CMake configure that `make` starts (CMAKE_TOOLCHAIN_FILE, set in the Makefile),
# never by a reader's build. It tells CMake what it would otherwise find out by compiling test
# programs; what gets built is the same.

# 1. The CUDA compiler the Makefile found, so that check_language(CUDA) skips the probe project
#    it would configure to find one. A folder configured with its own -DCMAKE_CUDA_COMPILER (OFF
#    in the sanitizer run) keeps it.
if(NOT DEFINED CMAKE_CUDA_COMPILER AND DEFINED ENV{FFI_COOKBOOK_NVCC})
  set(CMAKE_CUDA_COMPILER "$ENV{FFI_COOKBOOK_NVCC}" CACHE FILEPATH "CUDA compiler (found by make)")
endif()

# 2. What CMake learnt about each compiler when the Makefile configured a project of its own
#    ($FFI_COOKBOOK_COMPILER_FACTS, the files CMakeFiles/<version>/CMake<LANG>Compiler.cmake):
#    copied into a new build folder before the first project() looks there, CMake loads them
#    instead of identifying the compiler and testing its ABI (as it does when it configures a
#    folder again). nvcc's take 2.2 of the 3.4 s a recipe with CUDA takes to configure.
#    Not inside a try_compile, not for a folder that sets linker flags (the ABI test links), and
#    not for a language whose compiler or flags the folder sets.
get_property(_in_try_compile GLOBAL PROPERTY IN_TRY_COMPILE)
set(_facts "$ENV{FFI_COOKBOOK_COMPILER_FACTS}/CMakeFiles/${CMAKE_VERSION}")
set(_here "${CMAKE_BINARY_DIR}/CMakeFiles/${CMAKE_VERSION}")
if(NOT _in_try_compile AND DEFINED ENV{FFI_COOKBOOK_COMPILER_FACTS} AND IS_DIRECTORY "${_facts}"
   AND NOT EXISTS "${_here}/CMakeSystem.cmake" AND NOT DEFINED CACHE{CMAKE_EXE_LINKER_FLAGS})
  # and what identifying them leaves in the cache: the tools found beside them (ar, strip, ...)
  # and the binary format (CMake edits an ELF file's RPATH itself at install)
  set(_tools ADDR2LINE AR DLLTOOL LINKER NM OBJCOPY OBJDUMP RANLIB READELF STRIP)
  list(TRANSFORM _tools PREPEND CMAKE_)
  load_cache("$ENV{FFI_COOKBOOK_COMPILER_FACTS}" READ_WITH_PREFIX _facts_ ${_tools} CMAKE_EXECUTABLE_FORMAT)
  foreach(_tool ${_tools})
    if(NOT DEFINED CACHE{${_tool}})
      set(${_tool} "${_facts_${_tool}}" CACHE FILEPATH "Path to a program.")
      mark_as_advanced(${_tool})
    endif()
  endforeach()
  set(CMAKE_EXECUTABLE_FORMAT "${_facts_CMAKE_EXECUTABLE_FORMAT}" CACHE INTERNAL "Executable file format")
  set(_seeded_CXX FALSE)
  foreach(_lang C CXX CUDA)
    set(_own_compiler FALSE)
    if(_lang STREQUAL "CUDA")
      # the facts are about the nvcc above, with the C++ compiler above as its host compiler:
      # a folder with CUDA OFF, another nvcc or another host compiler is left alone
      if(NOT CMAKE_CUDA_COMPILER STREQUAL "$ENV{FFI_COOKBOOK_NVCC}" OR DEFINED ENV{CUDACXX}
         OR DEFINED ENV{CUDAHOSTCXX} OR DEFINED CMAKE_CUDA_HOST_COMPILER OR NOT _seeded_CXX)
        set(_own_compiler TRUE)
      endif()
    elseif(DEFINED CMAKE_${_lang}_COMPILER OR (_lang STREQUAL "C" AND DEFINED ENV{CC})
           OR (_lang STREQUAL "CXX" AND DEFINED ENV{CXX}))
      set(_own_compiler TRUE)
    endif()
    if(EXISTS "${_facts}/CMake${_lang}Compiler.cmake" AND NOT _own_compiler
       AND NOT DEFINED CACHE{CMAKE_${_lang}_FLAGS})
      file(COPY "${_facts}/CMake${_lang}Compiler.cmake" DESTINATION "${_here}")
      set(_seeded_${_lang} TRUE)
      if(NOT _lang STREQUAL "CUDA")
        load_cache("$ENV{FFI_COOKBOOK_COMPILER_FACTS}" READ_WITH_PREFIX _facts_ CMAKE_${_lang}_COMPILER
                   CMAKE_${_lang}_COMPILER_AR CMAKE_${_lang}_COMPILER_RANLIB)
        set(CMAKE_${_lang}_COMPILER "${_facts_CMAKE_${_lang}_COMPILER}" CACHE FILEPATH "${_lang} compiler")
        foreach(_tool AR RANLIB)
          set(CMAKE_${_lang}_COMPILER_${_tool} "${_facts_CMAKE_${_lang}_COMPILER_${_tool}}" CACHE FILEPATH
              "The compiler's wrapper around ${_tool}")
        endforeach()
        mark_as_advanced(CMAKE_${_lang}_COMPILER CMAKE_${_lang}_COMPILER_AR CMAKE_${_lang}_COMPILER_RANLIB)
      endif()
    endif()
  endforeach()
endif()
