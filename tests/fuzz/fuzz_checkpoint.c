/* libFuzzer harness: the checkpoint reader (metadata, then the field with
 * its checksums). Any byte string must end in a clean error or a valid read. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/checkpoint.h"
#include "solver/error.h"

static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    snprintf(path, sizeof path, "/tmp/heatsolve-fuzz-%ld.hdf", (long)getpid());
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    ckpt_meta meta;
    if (ckpt_read_meta(path, &meta) == HEAT_OK) {
        long points = heat_grid_points(&meta.grid);
        ckpt_meta_free(&meta);
        if (points > 0 && points <= (1L << 20)) {
            void *field = malloc((size_t)points * sizeof(double));
            if (field && ckpt_read(path, &meta, field) == HEAT_OK) ckpt_meta_free(&meta);
            free(field);
        }
    }
    unlink(path);
    return 0;
}
