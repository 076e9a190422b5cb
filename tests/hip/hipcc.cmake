# hipcc and the AMD GPU targets the HIP test programs are built for, shared by
# tests/hip and tests/conformance/hip. Sets FIKIT_HIPCC (empty: not found) and
# FIKIT_HIP_ARCHS_USED, with FIKIT_HIP_ARCH_FLAGS (--offload-arch=... each).
#
# FIKIT_HIP_ARCHS names the targets; left empty, the common ones are tried
# (MI50/60, MI100, MI200, MI300, MI350, RDNA2, RDNA3, RDNA4) and those this
# hipcc can build (its clang knows them and ROCm's device libraries have them)
# are kept. hipcc is never asked to detect the machine's GPU (without one,
# ROCm's rocm_agent_enumerator fails), so the build needs no GPU.

find_program(FIKIT_HIPCC hipcc PATHS /opt/rocm/bin)
set(FIKIT_HIP_ARCHS "" CACHE STRING
    "AMD GPU targets for the HIP test programs, e.g. gfx90a;gfx942 (empty: the common ones hipcc accepts)")
set(FIKIT_HIP_ARCH_CANDIDATES gfx906 gfx908 gfx90a gfx940 gfx942 gfx950 gfx1030 gfx1100 gfx1101
    gfx1200 gfx1201)

if(FIKIT_HIPCC)
  if(FIKIT_HIP_ARCHS)
    set(FIKIT_HIP_ARCHS_USED ${FIKIT_HIP_ARCHS})
  elseif(DEFINED FIKIT_HIP_ARCHS_PROBED AND FIKIT_HIP_ARCHS_PROBED_WITH STREQUAL FIKIT_HIPCC)
    set(FIKIT_HIP_ARCHS_USED ${FIKIT_HIP_ARCHS_PROBED})
  else()
    set(_dir ${CMAKE_BINARY_DIR}/CMakeFiles/fikit-hipcc-probe)
    file(MAKE_DIRECTORY ${_dir})
    file(WRITE ${_dir}/probe.hip "__global__ void fikit_probe(int *x) { *x = 1; }\n")
    set(_ok "")
    foreach(_a ${FIKIT_HIP_ARCH_CANDIDATES})
      execute_process(COMMAND ${FIKIT_HIPCC} --offload-arch=${_a} --cuda-device-only -c probe.hip
                              -o probe-${_a}.o
                      WORKING_DIRECTORY ${_dir} RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_QUIET
                      TIMEOUT 120)
      if(_rc EQUAL 0)
        list(APPEND _ok ${_a})
      endif()
    endforeach()
    set(FIKIT_HIP_ARCHS_PROBED "${_ok}" CACHE INTERNAL "AMD GPU targets this hipcc builds")
    set(FIKIT_HIP_ARCHS_PROBED_WITH "${FIKIT_HIPCC}" CACHE INTERNAL "the hipcc probed")
    set(FIKIT_HIP_ARCHS_USED ${_ok})
  endif()
  if(NOT FIKIT_HIP_ARCHS_USED)
    message(STATUS "  HIP test programs: not built: ${FIKIT_HIPCC} builds none of ${FIKIT_HIP_ARCH_CANDIDATES}")
    set(FIKIT_HIPCC "")
  else()
    message(STATUS "  HIP test programs: hipcc ${FIKIT_HIPCC}, targets ${FIKIT_HIP_ARCHS_USED}")
  endif()
else()
  message(STATUS "  HIP test programs: not built: hipcc not found (apt-get install hipcc)")
endif()

set(FIKIT_HIP_ARCH_FLAGS "")
foreach(_a ${FIKIT_HIP_ARCHS_USED})
  list(APPEND FIKIT_HIP_ARCH_FLAGS --offload-arch=${_a})
endforeach()
