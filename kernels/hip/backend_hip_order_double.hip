/*
 * The order kernels' launchers (backend_hip_order.hip) in double: a translation
 * unit of its own beside backend_hip_order_float.hip, so that the two
 * precisions' order kernels compile in parallel.
 */
#include "backend_hip_order.hip"

template int launch_order<double>(const hip_state *, const kernel_entry *, const int[3], int, int, hipStream_t);
