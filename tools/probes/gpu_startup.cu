// How long the CUDA runtime takes to start on this host: the first call
// (driver load), the context, and the allocations heatsolve makes before
// its first step; then how long their release and the context's take. nvcc -O2 gpu_startup.cu -o gpu_startup && ./gpu_startup
#include <chrono>
#include <cstdio>
#include <cuda_runtime.h>

static double now()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int main()
{
    double t0 = now();
    int count = 0;
    cudaGetDeviceCount(&count);
    double t1 = now();
    cudaSetDevice(0);
    cudaFree(0);
    double t2 = now();
    void *device = nullptr, *host = nullptr;
    cudaMalloc(&device, 2 * 26u << 20);
    double t3 = now();
    cudaMallocHost(&host, 26u << 20);
    double t4 = now();
    printf("cudaGetDeviceCount %.3f s, context %.3f s, cudaMalloc 52 MiB %.3f s, cudaMallocHost 26 MiB %.3f s\n",
           t1 - t0, t2 - t1, t3 - t2, t4 - t3);
    cudaFreeHost(host);
    cudaFree(device);
    double t5 = now();
    cudaDeviceReset();
    double t6 = now();
    printf("release: buffers %.3f s, context %.3f s\n", t5 - t4, t6 - t5);
    return 0;
}
