/*
 * The order kernels' launchers (backend_hip_order.hip) in float: a translation
 * unit of its own beside backend_hip_order_double.hip, so that the two
 * precisions' order kernels compile in parallel.
 */
#include "backend_hip_order.hip"

template int launch_order<float>(const hip_state *, const kernel_entry *, const int[3], int, int, hipStream_t);
