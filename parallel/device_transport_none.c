/*
 * The GPU-to-GPU half of parallel.h in a build that has no such transport
 * (no MPI, or no NVIDIA backend): halos between ranks are staged through
 * host memory by the backend, so there is never a device buffer to move.
 */
#include "parallel.h"

#include "../solver/error.h"

/* One process has nothing to choose (parallel.h); several ranks may still ask for host staging. */
int par_device_check_built(par_transport wanted, int ranks)
{
    if (ranks < 2 || wanted == TRANSPORT_AUTO || wanted == TRANSPORT_HOST) return HEAT_OK;
    return heat_error(HEAT_ERR_CONFIG, "parallel.transport = \"%s\": this heatsolve moves halos GPU to GPU only in "
                      "an NVIDIA build with MPI (-DHEATSOLVE_GPU=nvidia -DHEATSOLVE_MPI=ON); use \"auto\" or \"host\"",
                      wanted == TRANSPORT_MPI ? "mpi" : wanted == TRANSPORT_NCCL ? "nccl" : "ipc");
}

int par_device_select(par_transport wanted, int on_gpu)
{
    (void)on_gpu;
    return par_device_check_built(wanted, par_size());
}

int par_device_exchange(const heat_decomp *d, void *const send[FACE_COUNT], void *const recv[FACE_COUNT],
                        const size_t bytes[FACE_COUNT], void *stream)
{
    (void)d, (void)send, (void)recv, (void)bytes, (void)stream;
    return heat_error(HEAT_ERR_RUNTIME, "heatsolve was built without a GPU-to-GPU transport");
}

const char *par_device_transport(void) { return NULL; }
int par_device_exchange_blocks(void) { return 0; }
int par_device_alloc(void **buffer, size_t bytes) { return (void)bytes, *buffer = NULL, HEAT_OK; }
int par_device_free(void *buffer) { return (void)buffer, 0; }
void par_device_release(void) {}
