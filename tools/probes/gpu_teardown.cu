// Where a short GPU run's exit goes, and whether releasing the GPU while the
// last checkpoints are still being written hides it (issue 17). Holds what a
// demo-sized run holds (two 26 MiB fields, four page-locked 26 MiB snapshot
// buffers, one copy), then either
//   plain: waits `writes_ms` (the final writes), releases the buffers, returns
//          from main, leaving the context to the runtime's exit handler; or
//   early: releases the buffers and the context (cudaDeviceReset) while a
//          thread stands in for the writes, joins it, returns.
// Prints the wall-clock time at main's return; the caller stamps the exit.
//   nvcc -O2 gpu_teardown.cu -o gpu_teardown && ./gpu_teardown plain|early [writes_ms]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <thread>
#include <cuda_runtime.h>

static double wall()
{
    timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void check(cudaError_t e, const char *what)
{
    if (e == cudaSuccess) return;
    fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    exit(1);
}

int main(int argc, char **argv)
{
    const size_t bytes = 26u << 20;
    int early = argc > 1 && strcmp(argv[1], "early") == 0;
    int writes_ms = argc > 2 ? atoi(argv[2]) : 70;
    double begun = wall();
    void *field[2], *host[4];
    check(cudaSetDevice(0), "cudaSetDevice");
    for (auto &f : field) check(cudaMalloc(&f, bytes), "cudaMalloc"), check(cudaMemset(f, 0, bytes), "cudaMemset");
    for (auto &h : host) {
        h = aligned_alloc(1 << 21, bytes);
        memset(h, 1, bytes);
        check(cudaHostRegister(h, bytes, cudaHostRegisterDefault), "cudaHostRegister");
    }
    check(cudaMemcpy(host[0], field[0], bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
    double ready = wall();
    std::thread writes([writes_ms] { std::this_thread::sleep_for(std::chrono::milliseconds(writes_ms)); });
    double released_from = wall();
    if (early) {
        for (auto &h : host) check(cudaHostUnregister(h), "cudaHostUnregister");
        for (auto &f : field) check(cudaFree(f), "cudaFree");
        check(cudaDeviceReset(), "cudaDeviceReset");
    }
    double released = wall();
    writes.join();
    if (!early) {
        for (auto &h : host) check(cudaHostUnregister(h), "cudaHostUnregister");
        for (auto &f : field) check(cudaFree(f), "cudaFree");
    }
    for (auto &h : host) free(h);
    double returning = wall();
    printf("%s: start-up %.3f s, release beside the writes %.3f s, writes %d ms, main returns at %.6f\n",
           early ? "early" : "plain", ready - begun, released - released_from, writes_ms, returning);
    fflush(stdout);
    return 0;
}
