# mbt_find_mlir_runner_utils()
#   Defines the INTERFACE target mbt::mlir_runner_utils: the include
#   directory of MLIR's header-only mlir/ExecutionEngine/CRunnerUtils.h
#   (StridedMemRefType, the memref descriptor of Abi.h), and no library.
#   With MLIR found (the compiler build) it is MLIR's; without (a
#   runtime-only host) the directory in the cache variable
#   MBT_MLIR_RUNNER_UTILS_INCLUDE_DIR, or one found holding the header
#   (tools/bench/gpu_prepare.sh copies it into build-gpu/deps).
function(mbt_find_mlir_runner_utils)
  if(MLIR_FOUND)
    set(dirs ${MLIR_INCLUDE_DIRS})
  else()
    find_path(MBT_MLIR_RUNNER_UTILS_INCLUDE_DIR
      mlir/ExecutionEngine/CRunnerUtils.h
      HINTS /usr/lib/llvm-19/include)
    if(NOT MBT_MLIR_RUNNER_UTILS_INCLUDE_DIR)
      message(FATAL_ERROR "mbt: MLIR's mlir/ExecutionEngine/CRunnerUtils.h not "
                          "found. Install libmlir-19-dev or set "
                          "MBT_MLIR_RUNNER_UTILS_INCLUDE_DIR to a directory "
                          "holding a copy")
    endif()
    set(dirs ${MBT_MLIR_RUNNER_UTILS_INCLUDE_DIR})
    message(STATUS "mbt: MLIR's CRunnerUtils.h in ${dirs}")
  endif()
  add_library(mbt::mlir_runner_utils INTERFACE IMPORTED GLOBAL)
  set_target_properties(mbt::mlir_runner_utils PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${dirs}")
endfunction()
