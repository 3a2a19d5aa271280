# The HIP backend: kernels/hip/*.hip compiled for AMD (clang) or NVIDIA (nvcc).
string(TOLOWER "${HEATSOLVE_GPU}" HEATSOLVE_GPU)
if(HEATSOLVE_GPU STREQUAL "off")
  target_sources(heatcore PRIVATE solver/backend_none.c)
  return()
endif()
message(FATAL_ERROR "HEATSOLVE_GPU=${HEATSOLVE_GPU}: not yet")
