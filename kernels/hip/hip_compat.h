#pragma once
/*
 * One HIP source for AMD and NVIDIA. On AMD this is plain HIP. On NVIDIA the
 * same sources compile with nvcc (-x cu): Debian's HIP headers for NVIDIA do
 * not build against CUDA 13, so the few runtime calls heatsolve uses are
 * mapped to CUDA here, and the nontemporal store to the streaming store
 * __stcs (PTX st.global.cs).
 */
#if defined(__CUDACC__) && !defined(__HIP_PLATFORM_AMD__)
#include <cuda_runtime.h>

typedef cudaError_t hipError_t;
typedef cudaDeviceProp hipDeviceProp_t;
typedef cudaEvent_t hipEvent_t;
typedef cudaStream_t hipStream_t;
#define hipSuccess cudaSuccess
#define hipMemcpyHostToDevice cudaMemcpyHostToDevice
#define hipMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define hipMemcpyDeviceToDevice cudaMemcpyDeviceToDevice
#define hipGetErrorString cudaGetErrorString
#define hipGetLastError cudaGetLastError
#define hipGetDeviceCount cudaGetDeviceCount
#define hipGetDeviceProperties cudaGetDeviceProperties
#define hipSetDevice cudaSetDevice
#define hipGetDevice cudaGetDevice
#define hipDeviceGetAttribute cudaDeviceGetAttribute
#define hipDeviceAttributeMultiprocessorCount cudaDevAttrMultiProcessorCount
#define hipOccupancyMaxActiveBlocksPerMultiprocessor cudaOccupancyMaxActiveBlocksPerMultiprocessor
#define hipMemGetInfo cudaMemGetInfo
#define hipMalloc cudaMalloc
#define hipFree cudaFree
#define hipMemset cudaMemset
#define hipMemcpy cudaMemcpy
#define hipMemcpy2D cudaMemcpy2D
#define hipHostRegister cudaHostRegister
#define hipHostMalloc(pointer, bytes, flags) cudaMallocHost(pointer, bytes)
#define hipHostFree cudaFreeHost
#define hipHostMallocDefault 0
#define hipHostUnregister cudaHostUnregister
#define hipHostRegisterDefault cudaHostRegisterDefault
#define hipDeviceSynchronize cudaDeviceSynchronize
#define hipDeviceReset cudaDeviceReset
#define hipStreamCreateWithFlags cudaStreamCreateWithFlags
#define hipStreamCreateWithPriority cudaStreamCreateWithPriority
#define hipDeviceGetStreamPriorityRange cudaDeviceGetStreamPriorityRange
#define hipStreamNonBlocking cudaStreamNonBlocking
#define hipStreamDestroy cudaStreamDestroy
#define hipStreamSynchronize cudaStreamSynchronize
#define hipStreamWaitEvent cudaStreamWaitEvent
#define hipMemcpyAsync cudaMemcpyAsync
#define hipMemcpy2DAsync cudaMemcpy2DAsync
#define hipEventCreateWithFlags cudaEventCreateWithFlags
#define hipEventDisableTiming cudaEventDisableTiming
#define hipEventCreate cudaEventCreate
#define hipEventDestroy cudaEventDestroy
#define hipEventRecord cudaEventRecord
#define hipEventSynchronize cudaEventSynchronize
#define hipEventElapsedTime cudaEventElapsedTime
#define hipFuncSetAttribute cudaFuncSetAttribute
#define hipFuncAttributeMaxDynamicSharedMemorySize cudaFuncAttributeMaxDynamicSharedMemorySize
#define HEAT_GPU_PLATFORM "CUDA"
/* nontemporal_store_wide is one vector store here (st.global.cs.v2 / .v4) */
#define HEAT_WIDE_STORES 1

template <typename T> __device__ __forceinline__ void nontemporal_store(T value, T *address)
{
    __stcs(address, value);
}

/* A hint: the line holding address into L2 (prefetch.global.L2), no register waits on it. */
__device__ __forceinline__ void l2_prefetch(const void *address)
{
    asm volatile("prefetch.global.L2 [%0];" ::"l"(address));
}

/* Two or four values at an aligned address as one streaming store (st.global.cs.v2 / .v4). */
__device__ __forceinline__ void nontemporal_store_wide(double a, double b, double *address)
{
    __stcs(reinterpret_cast<double2 *>(address), make_double2(a, b));
}
__device__ __forceinline__ void nontemporal_store_wide(float a, float b, float *address)
{
    __stcs(reinterpret_cast<float2 *>(address), make_float2(a, b));
}
__device__ __forceinline__ void nontemporal_store_wide(float a, float b, float c, float d, float *address)
{
    __stcs(reinterpret_cast<float4 *>(address), make_float4(a, b, c, d));
}
#else
#include <hip/hip_runtime.h>
#define HEAT_GPU_PLATFORM "ROCm"
/* nontemporal_store_wide is separate stores here: a kernel that chooses between it and single
 * stores of the same points gets both merged into plain (cached) stores, so it should not */
#define HEAT_WIDE_STORES 0

template <typename T> __device__ __forceinline__ void nontemporal_store(T value, T *address)
{
    __builtin_nontemporal_store(value, address);
}

/* No L2 prefetch instruction to hint with: nothing. */
__device__ __forceinline__ void l2_prefetch(const void *address) { (void)address; }

/* Two or four values at an aligned address, each a nontemporal store (the compiler may merge them). */
template <typename T> __device__ __forceinline__ void nontemporal_store_wide(T a, T b, T *address)
{
    __builtin_nontemporal_store(a, address), __builtin_nontemporal_store(b, address + 1);
}
template <typename T> __device__ __forceinline__ void nontemporal_store_wide(T a, T b, T c, T d, T *address)
{
    nontemporal_store_wide(a, b, address), nontemporal_store_wide(c, d, address + 2);
}
#endif
