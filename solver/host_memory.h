#pragma once
/*
 * Large host buffers (fields, snapshots, the writer's buffers): on 2 MiB
 * pages where the kernel gives them, and touched by every thread before
 * first use, so that neither the first kernel nor a page-locking call
 * (cudaHostRegister) pays the page faults one 4 KiB page at a time.
 */
#include <stddef.h>

enum { HOST_HUGE_PAGE_BYTES = 2 << 20 };

/* `bytes` of zeroed memory, 2 MiB aligned from 2 MiB up (64-byte aligned
 * below), its pages touched in parallel by the OpenMP threads (on a
 * multi-socket host each page lands near the thread that first swept it).
 * NULL when memory is short. The caller releases it with free(). */
void *heat_host_alloc(size_t bytes);
