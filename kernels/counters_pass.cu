/*
 * counters_pass.cu - the counter pass over a benchmark's operations; see
 * counters_pass.cuh.  The same loop for the smem rows and the transpose
 * variants, so both read their counters the same way.
 */
#include "counters_pass.cuh"

int gb_counter_pass(int device, struct gb_counters_state *st, int count,
                    void (*select)(void *ctx, int i), gb_launch_fn launch, void *ctx,
                    long work, cudaStream_t stream, struct gb_counter_values *out,
                    struct gb_cuda_error *err)
{
    struct gb_counter_session *s = NULL;
    int rc = 0;

    for (int i = 0; i < count; i++)
        out[i].read = 0;
    if (!gb_counters_wanted(st) || gb_counter_session_open(device, st, &s) != 0)
        return 0;
    for (int i = 0; i < count; i++) {
        int read;
        select(ctx, i);
        read = gb_counter_profile(s, launch, ctx, work, stream, &out[i], err);
        if (read == 0)
            st->launches++;
        if (read < 0)
            rc = -1;
        if (read != 0)
            break;
    }
    /* Counts of some rows but not all would read as a complete set. */
    if (rc == 0 && !gb_counters_wanted(st))
        for (int i = 0; i < count; i++)
            out[i].read = 0;
    gb_counter_session_close(s);
    return rc;
}
