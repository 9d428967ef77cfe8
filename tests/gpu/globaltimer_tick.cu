/*
 * globaltimer_tick.cu - gpubench-globaltimer: how finely %globaltimer ticks
 * on a card, and whether it runs at wall-clock rate (the SM clock of
 * smem_read is clock64 cycles over %globaltimer ns: kernels/sm_clock.h).
 *
 *   gpubench-globaltimer [--device N]
 *
 * One thread reads %globaltimer back to back kReads times and reports the
 * steps it saw (smallest non-zero, median non-zero, largest, how many
 * distinct values); then two one-thread kernels read it 0.5 s apart by the
 * host's CLOCK_MONOTONIC, and the ratio of the two intervals is printed.
 * One JSON line on stdout.  Changes no setting of the card.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const int kReads = 4096;

__global__ void read_timer(unsigned long long *out, int n)
{
    for (int i = 0; i < n; i++) {
        unsigned long long t;
        asm volatile("mov.u64 %0, %%globaltimer;"
                     : "=l"(t));
        out[i] = t;
    }
}

static double now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int check(cudaError_t e, const char *what)
{
    if (e == cudaSuccess)
        return 0;
    fprintf(stderr, "gpubench-globaltimer: %s: %s\n", what, cudaGetErrorString(e));
    return -1;
}

static int cmp_ull(const void *a, const void *b)
{
    unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;
    return (x > y) - (x < y);
}

/* One kernel reading the timer once, and the host time after it ended. */
static int stamp(unsigned long long *dev, unsigned long long *gpu_ns, double *host_ns)
{
    double before = now_ns();
    read_timer<<<1, 1>>>(dev, 1);
    if (check(cudaGetLastError(), "launch") != 0 ||
        check(cudaDeviceSynchronize(), "cudaDeviceSynchronize") != 0 ||
        check(cudaMemcpy(gpu_ns, dev, sizeof(*gpu_ns), cudaMemcpyDeviceToHost), "cudaMemcpy") != 0)
        return -1;
    *host_ns = (before + now_ns()) / 2;
    return 0;
}

int main(int argc, char **argv)
{
    unsigned long long *dev = NULL, *host = NULL, *steps = NULL, g0, g1;
    double h0, h1;
    int device = 0, nsteps = 0, distinct = 1, rc = 1;
    struct timespec half = {0, 500000000};

    if (argc == 3 && strcmp(argv[1], "--device") == 0)
        device = atoi(argv[2]);
    host = (unsigned long long *)calloc(kReads, sizeof(*host));
    steps = (unsigned long long *)calloc(kReads, sizeof(*steps));
    if (host == NULL || steps == NULL || check(cudaSetDevice(device), "cudaSetDevice") != 0 ||
        check(cudaMalloc(&dev, kReads * sizeof(*dev)), "cudaMalloc") != 0)
        goto out;
    read_timer<<<1, 1>>>(dev, kReads); /* warm: the module loads here */
    read_timer<<<1, 1>>>(dev, kReads);
    if (check(cudaGetLastError(), "launch") != 0 ||
        check(cudaMemcpy(host, dev, kReads * sizeof(*dev), cudaMemcpyDeviceToHost),
              "cudaMemcpy") != 0)
        goto out;
    for (int i = 1; i < kReads; i++) {
        if (host[i] != host[i - 1]) {
            steps[nsteps++] = host[i] - host[i - 1];
            distinct++;
        }
    }
    qsort(steps, (size_t)nsteps, sizeof(*steps), cmp_ull);
    if (stamp(dev, &g0, &h0) != 0)
        goto out;
    nanosleep(&half, NULL);
    if (stamp(dev, &g1, &h1) != 0)
        goto out;
    printf("{\"reads\":%d,\"distinct\":%d,\"span_ns\":%llu,\"step_min_ns\":%llu,"
           "\"step_median_ns\":%llu,\"step_max_ns\":%llu,"
           "\"rate_vs_host\":%.6f,\"host_interval_ns\":%.0f}\n",
           kReads, distinct, host[kReads - 1] - host[0], nsteps ? steps[0] : 0ULL,
           nsteps ? steps[nsteps / 2] : 0ULL, nsteps ? steps[nsteps - 1] : 0ULL,
           (double)(g1 - g0) / (h1 - h0), h1 - h0);
    rc = 0;

out:
    if (dev)
        (void)cudaFree(dev);
    free(host);
    free(steps);
    return rc;
}
