/*
 * Does parallel HDF5 take pre-compressed chunks from several ranks? Each rank
 * writes one chunk of a deflate-filtered dataset with H5Dwrite_chunk (stored
 * bytes, deflate skipped by the filter mask), independently or collectively;
 * rank 0 then reopens the file alone and checks every value. heatsolve would
 * write checkpoints this way if it worked; run it with
 * tools/probes/phdf5_direct_chunk.sh after installing libhdf5-openmpi-dev.
 */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

enum { CHUNK = 1024 };

static int write_chunks(const char *path, int rank, int size, int collective)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    hsize_t dims[1] = {(hsize_t)CHUNK * size}, chunk[1] = {CHUNK}, offset[1] = {(hsize_t)CHUNK * rank};
    hid_t space = H5Screate_simple(1, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 1, chunk);
    H5Pset_deflate(dcpl, 1);
    hid_t dset = H5Dcreate2(file, "x", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    double values[CHUNK];
    for (int i = 0; i < CHUNK; ++i) values[i] = (double)rank * CHUNK + i + 1;
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    if (collective) H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
    herr_t status = H5Dwrite_chunk(dset, dxpl, 1u /* deflate skipped */, offset, sizeof values, values);
    H5Pclose(dxpl), H5Dclose(dset), H5Pclose(dcpl), H5Sclose(space), H5Fclose(file), H5Pclose(fapl);
    return status >= 0;
}

/* Rank 0 alone: how many values did not come back? */
static long wrong_values(const char *path, int size)
{
    static double back[CHUNK * 64];
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t dset = H5Dopen2(file, "x", H5P_DEFAULT);
    if (file < 0 || dset < 0 || H5Dread(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, back) < 0) return -1;
    long wrong = 0;
    for (long i = 0; i < (long)CHUNK * size; ++i) wrong += back[i] != (double)i + 1;
    H5Dclose(dset), H5Fclose(file);
    return wrong;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    unsigned major, minor, release;
    H5get_libversion(&major, &minor, &release);
    int works = 1;
    for (int collective = 0; collective < 2 && size <= 64; ++collective) {
        const char *path = collective ? "collective.h5" : "independent.h5";
        int wrote = write_chunks(path, rank, size, collective), all = 0;
        MPI_Allreduce(&wrote, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (rank == 0) {
            long wrong = all ? wrong_values(path, size) : -1;
            printf("HDF5 %u.%u.%u, %d ranks, %s H5Dwrite_chunk: %s", major, minor, release, size,
                   collective ? "collective" : "independent", all ? "returned success" : "failed");
            if (all) printf(", %ld of %d values wrong on reading back", wrong, CHUNK * size);
            printf("\n");
            works &= all && wrong == 0;
            remove(path);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (rank == 0) printf("verdict: parallel HDF5 %s pre-compressed chunks from several ranks\n", works ? "takes" : "does not take");
    MPI_Finalize();
    return 0;
}
