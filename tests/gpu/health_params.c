/*
 * health_params.c - gpubench-health-params: the short form the health
 * suite runs a benchmark with (common/bench_spec.c's health_params), so
 * the GPU checks run exactly what the nightly suite runs, from the one
 * table, without a daemon.
 *
 *   gpubench-health-params NAME
 *
 * Prints the JSON object and exits 0; exits 1 when NAME is unknown or has
 * no short form.
 */
#include <stdio.h>

#include "bench_spec.h"

int main(int argc, char **argv)
{
    const struct gb_benchmark *b = argc == 2 ? gb_benchmark_find(argv[1]) : NULL;

    if (argc != 2) {
        fprintf(stderr, "usage: gpubench-health-params NAME\n");
        return 2;
    }
    if (b == NULL || b->health_params == NULL) {
        fprintf(stderr, "gpubench-health-params: %s has no health_params\n", argv[1]);
        return 1;
    }
    printf("%s\n", b->health_params);
    return 0;
}
