/*
 * calibrate.c - grow the work of a sample until it lasts long enough; see
 * calibrate.h.  It aims past the target because the first short timings
 * carry launch overhead and read long: growing only to the target would
 * often land just under it and cost another round.
 */
#include "calibrate.h"

#include <math.h>

#define AIM_PAST_TARGET 1.05
#define MIN_GROWTH 2.0
#define MAX_GROWTH 64.0

int gb_calibrate_step(long *work, double measured_ms, double target_ms,
                      long max_work)
{
    double factor, next;
    long pow2;

    if (*work < 1)
        *work = 1;
    if (measured_ms >= target_ms || *work >= max_work)
        return 1;
    /* A timing of zero (below the event resolution) says only "far too
     * short": grow by the most we allow. */
    factor = measured_ms > 0 ? target_ms * AIM_PAST_TARGET / measured_ms
                             : MAX_GROWTH;
    if (factor < MIN_GROWTH)
        factor = MIN_GROWTH;
    if (factor > MAX_GROWTH)
        factor = MAX_GROWTH;
    next = ceil((double)*work * factor);
    for (pow2 = 1; (double)pow2 < next && pow2 < max_work; pow2 *= 2)
        ;
    *work = pow2 >= max_work ? max_work : pow2;
    return 0;
}
