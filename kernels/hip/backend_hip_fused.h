/*
 * Several heat steps a sweep on the GPU: the table of fused kernels the tuner
 * times (backend_hip_fused.hip) and the benchmark lists (backend_hip.hip).
 * Inline: one table across the backend's translation units.
 */
#pragma once

/* One fused kernel: K steps a sweep over tiles of bx cols x (by * rows)
 * columns (cols neighbouring columns a thread; a thread's rows neighbours
 * where `together`), zchunk planes a block (or chunks fitted to the GPU's
 * waves of blocks, wave_zchunk, where the tuner finds that faster), the
 * plane `prefetch` beyond the next hinted into L2 (0: none); `interior`:
 * the interior march (fused_kernels.hip: heat_fused's INTERIOR); `blocks`
 * > 0: kept to the registers of that many blocks an SM, in the precision
 * the shape was sized for (fused_fits; BLOCKS); `faces`: tiles beside faces whose ghosts are made march too
 * (FACE_MARCH). */
struct fused_entry {
    heat_variant variant;
    int steps, bx, by, rows, cols, zchunk, prefetch;
    bool together, interior;
    int blocks;
    bool faces;
};

/* Names: heat_fusedK_BXxBYxROWS, then c (rows together) and w COLS (columns a thread), i (the interior
 * march), f (so do the tiles beside faces), z and the planes a block, p and the plane hinted, b and the
 * blocks an SM */
#define FUSED_ENTRY_F(name, k, bx, by, rows, cols, z, pf, together, interior, blocks, faces)                  \
    {{"heat_fused" #k "_" #bx "x" #by "x" #rows name, rows, 0, k}, k, bx, by, rows, cols, z, pf, together,   \
     interior, blocks, faces}
#define FUSED_ENTRY_B(name, k, bx, by, rows, cols, z, pf, together, interior, blocks)                         \
    FUSED_ENTRY_F(name, k, bx, by, rows, cols, z, pf, together, interior, blocks, false)
#define FUSED_ENTRY(name, k, bx, by, rows, cols, z, pf, together, interior)                                   \
    FUSED_ENTRY_B(name, k, bx, by, rows, cols, z, pf, together, interior, 0)
#define FUSED(k, bx, by, rows, z) FUSED_ENTRY("z" #z, k, bx, by, rows, 1, z, 0, false, false)
#define FUSED_HINTED(k, bx, by, rows, z, pf) FUSED_ENTRY("z" #z "p" #pf, k, bx, by, rows, 1, z, pf, false, false)
#define FUSED_WIDE(k, bx, by, rows, cols, z) FUSED_ENTRY("w" #cols "z" #z, k, bx, by, rows, cols, z, 0, false, false)
#define FUSED_SHAPES(k)                                                                                       \
    FUSED(k, 32, 16, 2, 64), FUSED(k, 32, 16, 2, 128), FUSED_HINTED(k, 32, 16, 2, 64, 4),                     \
        FUSED_ENTRY("ciz64", k, 32, 16, 2, 1, 64, 0, true, true)
inline const fused_entry fused_table[] = {FUSED_SHAPES(2),
                                          FUSED_ENTRY_B("ciz64b3", 2, 32, 16, 2, 1, 64, 0, true, true, 3),
                                          FUSED(2, 64, 8, 4, 64),
                                          FUSED_WIDE(2, 32, 32, 1, 2, 64),
                                          FUSED_SHAPES(3),
                                          FUSED_WIDE(3, 16, 32, 1, 4, 64),
                                          FUSED_ENTRY_F("w4ifz64b2", 2, 16, 32, 1, 4, 64, 0, false, true, 2, true),
                                          FUSED_ENTRY_B("w4iz64b2", 3, 16, 32, 1, 4, 64, 0, false, true, 2),
                                          FUSED_ENTRY_F("w4ifz64b2", 3, 16, 32, 1, 4, 64, 0, false, true, 2, true),
                                          FUSED_ENTRY_F("w4ifz64b2", 3, 16, 28, 1, 4, 64, 0, false, true, 2, true),
                                          FUSED_ENTRY_F("w2ifz64b2", 2, 16, 32, 1, 2, 64, 0, false, true, 2, true),
                                          FUSED_ENTRY_F("cifz64", 3, 32, 16, 2, 1, 64, 0, true, true, 0, true),
                                          FUSED(4, 32, 16, 2, 64),
                                          FUSED(4, 32, 16, 2, 128)};
#undef FUSED_SHAPES
#undef FUSED_WIDE
#undef FUSED_HINTED
#undef FUSED
#undef FUSED_ENTRY
#undef FUSED_ENTRY_B
#undef FUSED_ENTRY_F
enum { FUSED_COUNT = sizeof fused_table / sizeof fused_table[0] };

inline const fused_entry *find_fused(const char *name)
{
    for (const fused_entry &e : fused_table)
        if (strcmp(e.variant.kernel, name) == 0) return &e;
    return NULL;
}
