# cudss.cmake — the optional cuDSS back-end of the factorisation (fact_cudss.c, cudss_load.c), included by
# factor/CMakeLists.txt after pl_layer(pl_factor ...).
#
# cuDSS comes from PyPI's nvidia-cudss-cu13 wheel (tools/setup-deps.sh installs it into /usr/local's
# dist-packages: nvidia/cu13/include/cudss.h, nvidia/cu13/lib/libcudss.so.1), from NVIDIA's libcudss
# Debian packages, or from any directory named by PJDS_CUDSS_ROOT (its include/ and lib/).  Found with
# -DPJDS_CUDA=ON, the back-end is compiled in (PJDS_HAVE_CUDSS=1 for pl_factor and its users) and
# libcudss is opened at run time from the directory found here (cudss_load.h: linking it costs every
# start of the app 0.2 s), so nothing is linked and no RPATH is needed.  Not found, the build goes on
# and factorization = cudss reports that it is not built in.
set(PJDS_CUDSS_ROOT "$ENV{PJDS_CUDSS_ROOT}" CACHE PATH
    "cuDSS install with include/cudss.h and lib/libcudss.so.1 (empty: search the pip wheel and system paths)")
option(PJDS_CUDSS "Build the cuDSS factorisation back-end where cuDSS is found" ON)
set(PJDS_HAVE_CUDSS 0 CACHE INTERNAL "cuDSS back-end built in (factor/cudss.cmake)")

function(pl_cudss_hints out major)
  set(h ${PJDS_CUDSS_ROOT})
  # pip wheels: system (setup-deps), Debian's python, the user's site, a virtual environment
  file(GLOB w LIST_DIRECTORIES true /usr/local/lib/python3*/dist-packages/nvidia/cu${major}
       /usr/lib/python3*/dist-packages/nvidia/cu${major} /usr/local/lib/python3*/site-packages/nvidia/cu${major}
       $ENV{HOME}/.local/lib/python3*/site-packages/nvidia/cu${major}
       $ENV{VIRTUAL_ENV}/lib/python3*/site-packages/nvidia/cu${major})
  list(APPEND h ${w})
  if(PJDS_PYTHON)
    execute_process(COMMAND ${PJDS_PYTHON} -c
                    "import importlib.util as u; s = u.find_spec('nvidia'); print(';'.join(s.submodule_search_locations) if s else '')"
                    OUTPUT_VARIABLE py RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(rc EQUAL 0 AND py)
      foreach(d ${py})
        list(APPEND h ${d}/cu${major})
      endforeach()
    endif()
  endif()
  set(${out} ${h} PARENT_SCOPE)
endfunction()

if(PJDS_CUDA AND PJDS_CUDSS)
  set(pl_cu_major ${CUDAToolkit_VERSION_MAJOR})
  pl_cudss_hints(pl_cudss_h ${pl_cu_major})
  find_path(PJDS_CUDSS_INCLUDE cudss.h HINTS ${pl_cudss_h} PATH_SUFFIXES include include/libcudss/${pl_cu_major})
  find_library(PJDS_CUDSS_LIB NAMES cudss libcudss.so.1 HINTS ${pl_cudss_h}
               PATH_SUFFIXES lib lib64 lib/x86_64-linux-gnu/libcudss/${pl_cu_major})
endif()

if(PJDS_CUDA AND PJDS_CUDSS AND PJDS_CUDSS_INCLUDE AND PJDS_CUDSS_LIB)
  file(STRINGS ${PJDS_CUDSS_INCLUDE}/cudss.h pl_cv REGEX "#define CUDSS_VERSION_(MAJOR|MINOR|PATCH) ")
  string(REGEX REPLACE "[^0-9;]*([0-9]+)[^;]*" "\\1" pl_cv "${pl_cv}")
  string(REPLACE ";" "." pl_cv "${pl_cv}")
  get_filename_component(pl_cudss_real ${PJDS_CUDSS_LIB} REALPATH)
  get_filename_component(PJDS_CUDSS_LIBDIR ${pl_cudss_real} DIRECTORY)
  target_sources(pl_factor_obj PRIVATE ${CMAKE_CURRENT_LIST_DIR}/fact_cudss.c ${CMAKE_CURRENT_LIST_DIR}/cudss_load.c)
  target_compile_definitions(pl_factor PUBLIC PJDS_HAVE_CUDSS=1)
  target_compile_definitions(pl_factor_obj PRIVATE PL_CUDSS_DIR="${PJDS_CUDSS_LIBDIR}"
                             PL_CUDA_LIBDIR="${CUDAToolkit_LIBRARY_DIR}")
  target_include_directories(pl_factor_obj PRIVATE ${PJDS_CUDSS_INCLUDE})
  find_package(Threads REQUIRED)
  target_link_libraries(pl_factor PUBLIC CUDA::cudart Threads::Threads ${CMAKE_DL_LIBS})
  set(PJDS_HAVE_CUDSS 1 CACHE INTERNAL "cuDSS back-end built in (factor/cudss.cmake)")
  message(STATUS "cuDSS ${pl_cv}: found (${PJDS_CUDSS_LIBDIR}); factorization = cudss is built in, the library "
                 "is opened at run time")
elseif(NOT PJDS_CUDA)
  message(STATUS "cuDSS: not built in (a CPU build, -DPJDS_CUDA=OFF); factorization = cudss is unavailable")
elseif(NOT PJDS_CUDSS)
  message(STATUS "cuDSS: not built in (-DPJDS_CUDSS=OFF)")
else()
  message(STATUS "cuDSS not built in: install the nvidia-cudss-cu${CUDAToolkit_VERSION_MAJOR} wheel via "
                 "tools/setup-deps.sh and reconfigure (or set -DPJDS_CUDSS_ROOT=DIR with include/cudss.h and "
                 "lib/libcudss.so.1)")
endif()
