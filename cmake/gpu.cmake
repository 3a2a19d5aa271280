# The HIP backend: kernels/hip/backend_hip*.hip (which include the kernels) are
# compiled by clang for AMD GPUs or, through kernels/hip/hip_compat.h, by nvcc
# for NVIDIA GPUs. Option names are a contract (docs/DESIGN.md).
string(TOLOWER "${HEATSOLVE_GPU}" HEATSOLVE_GPU)
# Translation units that compile in parallel, sharing kernels/hip/backend_hip_internal.h; each
# launches its own kernels (no relocatable device code).
set(HEAT_HIP_PARTS backend_hip backend_hip_order_float backend_hip_order_double backend_hip_cg backend_hip_materials
  backend_hip_fused)
list(TRANSFORM HEAT_HIP_PARTS PREPEND ${CMAKE_CURRENT_SOURCE_DIR}/kernels/hip/ OUTPUT_VARIABLE HEAT_HIP_SOURCES)
list(TRANSFORM HEAT_HIP_SOURCES APPEND .hip)
# They include the other kernel sources and the solver's headers: the machine-code checks are
# rebuilt when any of them changes.
file(GLOB HEAT_HIP_DEPENDS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/kernels/hip/*.hip
  ${CMAKE_CURRENT_SOURCE_DIR}/kernels/hip/*.h ${CMAKE_CURRENT_SOURCE_DIR}/solver/*.h)

if(HEATSOLVE_GPU STREQUAL "off")
  target_sources(heatcore PRIVATE solver/backend_none.c)

elseif(HEATSOLVE_GPU STREQUAL "nvidia")
  if(NOT CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90) # H100 / H200
  endif()
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
  set_source_files_properties(${HEAT_HIP_SOURCES} PROPERTIES LANGUAGE CUDA)
  target_sources(heatcore PRIVATE ${HEAT_HIP_SOURCES})
  # -fmad=false: no multiply-add contraction, so every kernel variant and tile factor rounds
  # alike and the tuner's choice cannot change a result (with contraction, tile factors of one
  # kernel differ in the last bits; without, all variants agree, at a cost within the
  # run-to-run spread).
  target_compile_options(heatcore PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-x cu -O3 -fmad=false -Xptxas=-v>)
  target_link_libraries(heatcore PUBLIC CUDA::cudart)
  set_target_properties(heatcore PROPERTIES CUDA_STANDARD 17 CUDA_ARCHITECTURES "${CMAKE_CUDA_ARCHITECTURES}")
  # PTX of the kernels for the `isa` test (st.global.cs in the production kernel), a file a part.
  set(HEAT_ISA_FILES)
  foreach(part ${HEAT_HIP_PARTS})
    set(ptx ${CMAKE_BINARY_DIR}/heat_kernels_${part}.ptx)
    add_custom_command(OUTPUT ${ptx}
      COMMAND ${CMAKE_CUDA_COMPILER} -x cu -std=c++17 -O3 -fmad=false -arch=sm_${CMAKE_CUDA_ARCHITECTURES} -ptx
        ${CMAKE_CURRENT_SOURCE_DIR}/kernels/hip/${part}.hip -o ${ptx}
      DEPENDS ${HEAT_HIP_DEPENDS}
      COMMENT "PTX of ${part}.hip's kernels for the isa test")
    list(APPEND HEAT_ISA_FILES ${ptx})
  endforeach()
  add_custom_target(heat_isa ALL DEPENDS ${HEAT_ISA_FILES})

elseif(HEATSOLVE_GPU STREQUAL "amd")
  if(NOT CMAKE_HIP_ARCHITECTURES)
    set(CMAKE_HIP_ARCHITECTURES gfx90a gfx908 gfx940)
  endif()
  if(NOT CMAKE_HIP_COMPILER AND EXISTS /usr/lib/llvm-15/bin/clang++)
    set(CMAKE_HIP_COMPILER /usr/lib/llvm-15/bin/clang++) # CMake 3.25 rejects the hipcc wrapper
  endif()
  # CMake 3.25 looks for <rocm root>/lib/cmake/hip-lang; Debian keeps it under
  # lib/x86_64-linux-gnu/cmake. A folder in the build tree with a link fills the gap.
  if(NOT CMAKE_HIP_COMPILER_ROCM_ROOT AND EXISTS /usr/lib/x86_64-linux-gnu/cmake/hip-lang/hip-lang-config.cmake)
    file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/rocm-root/lib/cmake)
    file(CREATE_LINK /usr/lib/x86_64-linux-gnu/cmake/hip-lang ${CMAKE_BINARY_DIR}/rocm-root/lib/cmake/hip-lang SYMBOLIC)
    set(CMAKE_HIP_COMPILER_ROCM_ROOT ${CMAKE_BINARY_DIR}/rocm-root)
    list(APPEND CMAKE_PREFIX_PATH /usr/lib/x86_64-linux-gnu/cmake)
    set(ENV{CMAKE_PREFIX_PATH} "/usr/lib/x86_64-linux-gnu/cmake:$ENV{CMAKE_PREFIX_PATH}") # for the compiler check
  endif()
  set(HEAT_ROCM_FLAGS --rocm-path=/usr --hip-device-lib-path=/usr/lib/x86_64-linux-gnu/amdgcn/bitcode)
  string(REPLACE ";" " " CMAKE_HIP_FLAGS_INIT "${HEAT_ROCM_FLAGS}")
  enable_language(HIP)
  set_source_files_properties(${HEAT_HIP_SOURCES} PROPERTIES LANGUAGE HIP)
  target_sources(heatcore PRIVATE ${HEAT_HIP_SOURCES})
  target_compile_options(heatcore PRIVATE $<$<COMPILE_LANGUAGE:HIP>:-O3 -ffp-contract=off>) # as -fmad=false above
  set_target_properties(heatcore PROPERTIES HIP_ARCHITECTURES "${CMAKE_HIP_ARCHITECTURES}" HIP_STANDARD 17)
  # gfx90a code objects of the kernels for the `isa` test (glc slc stores, no scratch), a file a part.
  set(HEAT_ISA_FILES)
  foreach(part ${HEAT_HIP_PARTS})
    set(code_object ${CMAKE_BINARY_DIR}/heat_kernels_${part}_gfx90a.co)
    add_custom_command(OUTPUT ${code_object}
      COMMAND ${CMAKE_HIP_COMPILER} -x hip -std=c++17 -O3 -ffp-contract=off ${HEAT_ROCM_FLAGS} --offload-arch=gfx90a
        --cuda-device-only --no-gpu-bundle-output -c ${CMAKE_CURRENT_SOURCE_DIR}/kernels/hip/${part}.hip -o ${code_object}
      DEPENDS ${HEAT_HIP_DEPENDS}
      COMMENT "gfx90a code object of ${part}.hip's kernels for the isa test")
    list(APPEND HEAT_ISA_FILES ${code_object})
  endforeach()
  add_custom_target(heat_isa ALL DEPENDS ${HEAT_ISA_FILES})

else()
  message(FATAL_ERROR "HEATSOLVE_GPU=${HEATSOLVE_GPU}: expected off, amd or nvidia")
endif()
