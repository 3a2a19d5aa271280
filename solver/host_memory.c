#include "host_memory.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { HOST_LINE_BYTES = 64, TOUCH_BYTES = 4096 };

void *heat_host_alloc(size_t bytes)
{
    size_t align = bytes >= HOST_HUGE_PAGE_BYTES ? HOST_HUGE_PAGE_BYTES : HOST_LINE_BYTES;
    size_t rounded = (bytes + align - 1) / align * align;
    char *base = aligned_alloc(align, rounded ? rounded : align);
    if (!base) return NULL;
    /* 2 MiB pages where the kernel gives them on request (transparent huge pages
     * in "madvise" mode, Debian's default): the stencil reads three planes and
     * writes one, each a different 4 KiB page per row, and the TLB misses cost
     * more than the bytes. A hint: where it is refused, 4 KiB pages work too. */
    if (align == HOST_HUGE_PAGE_BYTES) (void)madvise(base, rounded, MADV_HUGEPAGE);
#pragma omp parallel for schedule(static)
    for (long page = 0; page < (long)((rounded + TOUCH_BYTES - 1) / TOUCH_BYTES); ++page) {
        size_t begin = (size_t)page * TOUCH_BYTES, end = begin + TOUCH_BYTES < rounded ? begin + TOUCH_BYTES : rounded;
        memset(base + begin, 0, end - begin);
    }
    return base;
}
