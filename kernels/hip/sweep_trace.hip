/*
 * HEATSOLVE_TRACE=1: the timeline of the fused sweeps that exchange beside
 * the inner planes (overlapped_sweeps), per process, from timing events on
 * both streams: where each stream's part of a sweep began and ended, how
 * long the exchange took beside the inner planes, and how long either
 * stream waited for the other. One line a call of advance (the tuner's
 * timings are not traced). Included by backend_hip_fused.hip.
 *
 * The events and the wait for the last of them at the end of a call cost a
 * little: a traced run's step time is not the figure to quote.
 */

enum { TRACE_SWEEPS = 64 }; /* sweeps a call traced; the rest of a longer call is not */

/* Where a stream stands in sweep n: its edge planes' launches begin and end
 * (comm), the next sweep's ghosts sent (comm), its inner planes' launch
 * begins and ends (default). */
enum trace_point { EDGE_START, EDGE_END, SENT, INNER_START, INNER_END, TRACE_POINTS };

struct sweep_trace {
    long sweeps;                   /* in the call traced now */
    hipEvent_t origin, first_sent; /* the comm stream before and after the ghosts of the first sweep */
    hipEvent_t at[TRACE_POINTS][TRACE_SWEEPS];
};

static bool trace_wanted(void)
{
    const char *env = getenv("HEATSOLVE_TRACE");
    return env && *env && strcmp(env, "0") != 0;
}

static void trace_destroy(sweep_trace **trace)
{
    sweep_trace *t = *trace;
    if (!t) return;
    for (auto &point : t->at)
        for (hipEvent_t event : point)
            if (event) (void)hipEventDestroy(event);
    if (t->origin) (void)hipEventDestroy(t->origin);
    if (t->first_sent) (void)hipEventDestroy(t->first_sent);
    delete t;
    *trace = NULL;
}

static int trace_create(sweep_trace **out)
{
    sweep_trace *t = new (std::nothrow) sweep_trace();
    HEAT_CHECK(t, "out of memory");
    *out = t;
    HIP_CALL(hipEventCreate(&t->origin));
    HIP_CALL(hipEventCreate(&t->first_sent));
    for (auto &point : t->at)
        for (hipEvent_t &event : point) HIP_CALL(hipEventCreate(&event));
    return HEAT_OK;
}

/* Marks point p of sweep n on `stream`, where the call is traced (t) and n has a slot. */
static int trace_mark(const sweep_trace *t, trace_point p, long n, hipStream_t stream)
{
    if (!t || n >= TRACE_SWEEPS) return HEAT_OK;
    HIP_CALL(hipEventRecord(t->at[p][n], stream));
    return HEAT_OK;
}

static double trace_ms(hipEvent_t from, hipEvent_t to)
{
    float ms = 0.0f;
    return hipEventElapsedTime(&ms, from, to) == hipSuccess ? (double)ms : 0.0;
}

/* The line of one traced call: means over its sweeps (ms) of the inner
 * planes' sweep, the edge planes', the exchange beside the inner planes,
 * how late the next edge planes began after the inner planes they wait
 * for, and the default stream's idle time between inner sweeps. */
static int trace_report(const sweep_trace *t, const char *kernel, bool waves, int offset, int planes, int whole_z,
                        int inner_begin, int inner_end)
{
    const int n = (int)std::min(t->sweeps, (long)TRACE_SWEEPS);
    if (n == 0) return HEAT_OK;
    const auto &at = t->at;
    HIP_CALL(hipEventSynchronize(at[INNER_END][n - 1]));
    HIP_CALL(hipEventSynchronize(at[EDGE_END][n - 1]));
    double inner = 0, edges = 0, exchange = 0, late = 0, late_most = 0, idle = 0, idle_most = 0;
    for (int i = 0; i < n; ++i) {
        inner += trace_ms(at[INNER_START][i], at[INNER_END][i]);
        edges += trace_ms(at[EDGE_START][i], at[EDGE_END][i]);
        if (i + 1 < n) {
            exchange += trace_ms(at[EDGE_END][i], at[SENT][i]);
            const double l = trace_ms(at[INNER_END][i], at[EDGE_START][i + 1]);
            const double w = trace_ms(at[INNER_END][i], at[INNER_START][i + 1]);
            late += l, late_most = std::max(late_most, l), idle += w, idle_most = std::max(idle_most, w);
        }
    }
    const double whole = std::max(trace_ms(t->origin, at[INNER_END][n - 1]), trace_ms(t->origin, at[EDGE_END][n - 1]));
    const int gaps = n > 1 ? n - 1 : 1;
    printf("trace z [%d, %d) of %d, inner [%d, %d) %s%s: %d sweeps, %.3f ms a sweep; inner %.3f edges %.3f; exchange "
           "beside %.3f (first %.3f, before inner %.3f); next edges after inner +%.3f (most %.3f); default idle "
           "%.3f (most %.3f)\n",
           offset, offset + planes, whole_z, inner_begin, inner_end, kernel, waves ? " waves" : "", n, whole / n, inner / n,
           edges / n, exchange / gaps, trace_ms(t->origin, t->first_sent), trace_ms(t->origin, at[INNER_START][0]),
           late / gaps, late_most, idle / gaps, idle_most);
    fflush(stdout);
    return HEAT_OK;
}

/* The line of one traced call of sweeps on the default stream alone: the
 * exchange before each sweep (where ranks are cut) and the sweep, means (ms). */
static int trace_report_plain(const sweep_trace *t, const char *kernel, bool waves, int offset, int planes, int whole_z,
                              bool cut)
{
    const int n = (int)std::min(t->sweeps, (long)TRACE_SWEEPS);
    if (n == 0) return HEAT_OK;
    const auto &at = t->at;
    HIP_CALL(hipEventSynchronize(at[INNER_END][n - 1]));
    double exchange = 0, sweep = 0;
    for (int i = 0; i < n; ++i) {
        exchange += trace_ms(at[EDGE_START][i], at[EDGE_END][i]);
        sweep += trace_ms(at[INNER_START][i], at[INNER_END][i]);
    }
    printf("trace z [%d, %d) of %d, %s %s%s: %d sweeps, %.3f ms a sweep; exchange before %.3f, sweep %.3f\n", offset,
           offset + planes, whole_z, cut ? "exchange first" : "no exchange", kernel, waves ? " waves" : "", n,
           trace_ms(t->origin, at[INNER_END][n - 1]) / n, exchange / n, sweep / n);
    fflush(stdout);
    return HEAT_OK;
}
