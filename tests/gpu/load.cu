/*
 * load.cu - gpubench-load: another process's kernels on a card, for the
 * GPU check of issue 13 (the quiet wait, processes_seen, contended runs).
 *
 *   gpubench-load [--device N] [--seconds S]
 *
 * Prints its pid, then keeps every SM of GPU N busy for S seconds (default
 * 10) with kernels that spin on clock64 for about 20 ms each, one after
 * another, and exits 0.  It changes no setting of the card.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

__global__ void spin(long long cycles, unsigned *sink)
{
    long long start = clock64();
    unsigned acc = threadIdx.x;

    while (clock64() - start < cycles)
        acc = acc * 1664525u + 1013904223u;
    if (acc == 0x12345678u)
        sink[0] = acc; /* never in practice; keeps the loop alive */
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int check(cudaError_t e, const char *what)
{
    if (e == cudaSuccess)
        return 0;
    fprintf(stderr, "gpubench-load: %s: %s\n", what, cudaGetErrorString(e));
    return -1;
}

int main(int argc, char **argv)
{
    int device = 0, sms = 0, clock_khz = 0;
    double seconds = 10, end;
    unsigned *sink = NULL;
    long long launches = 0;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--device") == 0 && i + 1 < argc)
            device = atoi(argv[++i]);
        else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
            seconds = atof(argv[++i]);
        else {
            fprintf(stderr, "usage: gpubench-load [--device N] [--seconds S]\n");
            return 2;
        }
    }
    if (check(cudaSetDevice(device), "cudaSetDevice") != 0 ||
        check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
              "cudaDeviceGetAttribute") != 0 ||
        check(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device),
              "cudaDeviceGetAttribute") != 0 ||
        check(cudaMalloc(&sink, sizeof(unsigned)), "cudaMalloc") != 0)
        return 1;
    printf("gpubench-load: pid %d on GPU %d for %g s\n", (int)getpid(), device, seconds);
    fflush(stdout);
    end = now_s() + seconds;
    while (now_s() < end) {
        /* ~20 ms a kernel at the rated clock; 2 blocks an SM. */
        spin<<<2 * sms, 256>>>((long long)clock_khz * 20, sink);
        if (check(cudaGetLastError(), "spin launch") != 0 ||
            check(cudaDeviceSynchronize(), "cudaDeviceSynchronize") != 0)
            return 1;
        launches++;
    }
    printf("gpubench-load: %lld launches, done\n", launches);
    return check(cudaFree(sink), "cudaFree") != 0;
}
