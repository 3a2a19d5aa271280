/* Large host buffers on 2 MiB pages: heat_host_alloc's buffers, and every
 * field of the CPU backend (a madvise hint given inside a page had left all
 * fields but the first on 4 KiB pages). Counted by the kernel itself
 * (AnonHugePages of /proc/self/smaps_rollup); skipped where transparent huge
 * pages are off or the kernel gives none, and under AddressSanitizer. */
#include <sys/mman.h>

#include "solver/host_memory.h"
#include "test_util.h"

static long anon_huge_kib(void)
{
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    if (!f) return -1;
    char line[256];
    long kib = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "AnonHugePages: %ld kB", &kib) == 1) break;
    fclose(f);
    return kib;
}

static int huge_pages_off(void)
{
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    char mode[128] = "";
    if (f) {
        if (!fgets(mode, sizeof mode, f)) mode[0] = 0;
        fclose(f);
    }
    return !f || strstr(mode, "[never]") != NULL;
}

/* Whether this kernel hands out 2 MiB pages on request at all, asked
 * without heat_host_alloc: 4 MiB aligned, hinted, touched. */
static long kernel_gives_huge_pages(void)
{
    const size_t bytes = 4 << 20;
    char *probe = aligned_alloc(HOST_HUGE_PAGE_BYTES, bytes);
    if (!probe) return 0;
    long before = anon_huge_kib();
    (void)madvise(probe, bytes, MADV_HUGEPAGE);
    memset(probe, 1, bytes);
    long given = anon_huge_kib() - before;
    free(probe);
    return given > 0;
}

int main(void)
{
#if defined(__SANITIZE_ADDRESS__)
    /* AddressSanitizer's allocator places large buffers with its own headers: fewer of their
     * pages can be 2 MiB pages, which says nothing of the allocator that runs use. */
    printf("skipped: built with AddressSanitizer, whose allocator is not the one runs use\n");
    return TEST_SKIP;
#endif
    if (huge_pages_off() || anon_huge_kib() < 0 || !kernel_gives_huge_pages()) {
        printf("skipped: transparent huge pages are off here, or the kernel gives "
               "or counts none\n");
        return TEST_SKIP;
    }
    const size_t mib = 1 << 20;
    long before = anon_huge_kib();
    unsigned char *buffer = heat_host_alloc(6 * mib + 100);
    EXPECT(buffer, "out of memory");
    long buffer_kib = anon_huge_kib() - before;
    EXPECT((size_t)buffer % HOST_HUGE_PAGE_BYTES == 0, "the buffer starts at %p, not on a 2 MiB boundary", buffer);
    size_t nonzero = 0;
    for (size_t i = 0; i < 6 * mib + 100; ++i) nonzero += buffer[i] != 0;
    EXPECT(nonzero == 0, "%zu bytes of the new buffer are not zero", nonzero);
    free(buffer);
    printf("heat_host_alloc(6 MiB + 100): %ld KiB on 2 MiB pages\n", buffer_kib);
    EXPECT(buffer_kib >= 6 * 1024, "only %ld KiB of the 6 MiB buffer on 2 MiB pages", buffer_kib);

    /* The explicit CPU solver holds two fields of 4 MiB each (and their padding).
     */
    heat_problem p = test_problem(128, 128, 32, 1.0, 1.0, 0.25, HEAT_DOUBLE);
    heat_solver *s;
    before = anon_huge_kib();
    EXPECT_OK(heat_solver_create(&p, HEAT_SELECT_CPU, &s));
    long fields_kib = anon_huge_kib() - before;
    heat_solver_destroy(&s);
    printf("the CPU solver's two 4 MiB fields: %ld KiB on 2 MiB pages\n", fields_kib);
    EXPECT(fields_kib >= 2 * 4096,
           "the fields have only %ld KiB on 2 MiB pages: one of them is on 4 KiB "
           "pages",
           fields_kib);
    return 0;
}
