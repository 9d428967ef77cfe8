// The one-off experiment behind examples/h200_i18_stream_experiments.txt (not built by
// CMake): nvcc -O3 -arch=sm_90 -std=c++17 --extended-lambda -o exp h200_i18_stream_experiments.cu
// Experiments for issue 16: STREAM copy kernel variants vs cudaMemcpy, and
// gmem_stride ratios under cudaLimitMaxL2FetchGranularity.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#define CK(x)                                                   \
    do {                                                        \
        cudaError_t e_ = (x);                                   \
        if (e_ != cudaSuccess) {                                \
            printf("ERR %s: %s\n", #x, cudaGetErrorString(e_)); \
            exit(1);                                            \
        }                                                       \
    } while (0)

__global__ void fill(double *x, long long n)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        x[i] = i * 0.5;
}

template <int ILP>
__global__ void __launch_bounds__(1024) gs_copy(const double2 *__restrict__ a, double2 *__restrict__ c, long long n2)
{
    long long stride = (long long)gridDim.x * blockDim.x, i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    for (; i + (ILP - 1) * stride < n2; i += ILP * stride) {
        double2 x[ILP];
#pragma unroll
        for (int u = 0; u < ILP; u++)
            x[u] = a[i + u * stride];
#pragma unroll
        for (int u = 0; u < ILP; u++)
            c[i + u * stride] = x[u];
    }
    for (; i < n2; i += stride)
        c[i] = a[i];
}
template <int ILP>
__global__ void gs_copy_cs(const double2 *__restrict__ a, double2 *__restrict__ c, long long n2)
{
    long long stride = (long long)gridDim.x * blockDim.x, i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    for (; i + (ILP - 1) * stride < n2; i += ILP * stride) {
        double2 x[ILP];
#pragma unroll
        for (int u = 0; u < ILP; u++)
            x[u] = __ldcs(a + i + u * stride);
#pragma unroll
        for (int u = 0; u < ILP; u++)
            __stcs(c + i + u * stride, x[u]);
    }
    for (; i < n2; i += stride)
        c[i] = a[i];
}
// one-shot: each block copies ILP*blockDim double2 contiguous, no loop
template <int ILP>
__global__ void shot_copy(const double2 *__restrict__ a, double2 *__restrict__ c, long long n2)
{
    long long base = (long long)blockIdx.x * blockDim.x * ILP + threadIdx.x;
    double2 x[ILP];
#pragma unroll
    for (int u = 0; u < ILP; u++) {
        long long j = base + u * blockDim.x;
        if (j < n2)
            x[u] = a[j];
    }
#pragma unroll
    for (int u = 0; u < ILP; u++) {
        long long j = base + u * blockDim.x;
        if (j < n2)
            c[j] = x[u];
    }
}
template <int ILP>
__global__ void shot_copy_cs(const double2 *__restrict__ a, double2 *__restrict__ c, long long n2)
{
    long long base = (long long)blockIdx.x * blockDim.x * ILP + threadIdx.x;
    double2 x[ILP];
#pragma unroll
    for (int u = 0; u < ILP; u++) {
        long long j = base + u * blockDim.x;
        if (j < n2)
            x[u] = __ldcs(a + j);
    }
#pragma unroll
    for (int u = 0; u < ILP; u++) {
        long long j = base + u * blockDim.x;
        if (j < n2)
            __stcs(c + j, x[u]);
    }
}
template <int ILP>
__global__ void gs_triad(const double2 *__restrict__ a, const double2 *__restrict__ b, double2 *__restrict__ c, long long n2)
{
    long long stride = (long long)gridDim.x * blockDim.x, i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    for (; i + (ILP - 1) * stride < n2; i += ILP * stride) {
        double2 x[ILP], y[ILP];
#pragma unroll
        for (int u = 0; u < ILP; u++) {
            x[u] = a[i + u * stride];
            y[u] = b[i + u * stride];
        }
#pragma unroll
        for (int u = 0; u < ILP; u++) {
            double2 r;
            r.x = fma(3.0, y[u].x, x[u].x);
            r.y = fma(3.0, y[u].y, x[u].y);
            c[i + u * stride] = r;
        }
    }
}
template <int ILP>
__global__ void shot_triad(const double2 *__restrict__ a, const double2 *__restrict__ b, double2 *__restrict__ c, long long n2)
{
    long long base = (long long)blockIdx.x * blockDim.x * ILP + threadIdx.x;
    double2 x[ILP], y[ILP];
#pragma unroll
    for (int u = 0; u < ILP; u++) {
        long long j = base + u * blockDim.x;
        if (j < n2) {
            x[u] = a[j];
            y[u] = b[j];
        }
    }
#pragma unroll
    for (int u = 0; u < ILP; u++) {
        long long j = base + u * blockDim.x;
        if (j < n2) {
            double2 r;
            r.x = fma(3.0, y[u].x, x[u].x);
            r.y = fma(3.0, y[u].y, x[u].y);
            c[j] = r;
        }
    }
}

__global__ void __launch_bounds__(1024) gmem_read(const unsigned *__restrict__ data, long long stride, long long mask, int iterations, unsigned *sink)
{
    long long tid = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    long long warp = tid >> 5, warps = ((long long)gridDim.x * blockDim.x) >> 5;
    int lane = threadIdx.x & 31;
    unsigned acc = 0;
    for (int i = 0; i < iterations; i++) {
#pragma unroll
        for (int k = 0; k < 8; k++) {
            long long r = ((long long)i * 8 + k) * warps + warp;
            acc += __ldg(data + (((r * 32 * stride) & mask) + lane * stride));
        }
    }
    sink[tid] = acc;
}

static cudaEvent_t e0, e1;
template <class F>
static void timeit(const char *name, double bytes, F launch, int reps = 15, int per = 10)
{
    launch();
    CK(cudaDeviceSynchronize());
    std::vector<float> t;
    for (int r = 0; r < reps; r++) {
        CK(cudaEventRecord(e0));
        for (int k = 0; k < per; k++)
            launch();
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        t.push_back(ms / per);
    }
    CK(cudaGetLastError());
    std::sort(t.begin(), t.end());
    printf("%-34s median %.4f ms  min %.4f  -> %.1f GB/s (best %.1f)\n", name, t[reps / 2], t[0], bytes / t[reps / 2] / 1e6, bytes / t[0] / 1e6);
}

int main(int argc, char **argv)
{
    int dev = 0;
    CK(cudaSetDevice(dev));
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, dev));
    printf("%s SMs %d L2 %d MiB maxThr/SM %d\n", p.name, p.multiProcessorCount, p.l2CacheSize >> 20, p.maxThreadsPerMultiProcessor);
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    int sms = p.multiProcessorCount;
    long long n = (1LL << 30) / 8;  // 1 GiB of doubles per array
    double *a, *b, *c;
    CK(cudaMalloc(&a, n * 8));
    CK(cudaMalloc(&b, n * 8));
    CK(cudaMalloc(&c, n * 8));
    fill<<<sms * 4, 1024>>>(a, n);
    fill<<<sms * 4, 1024>>>(b, n);
    CK(cudaDeviceSynchronize());
    long long n2 = n / 2;
    double cb = 2.0 * n * 8, tb = 3.0 * n * 8;
    for (int round = 0; round < 2; round++) {
        printf("--- round %d, arrays 1 GiB\n", round);
        timeit("memcpy D2D", cb, [&] { CK(cudaMemcpyAsync(c, a, n * 8, cudaMemcpyDeviceToDevice)); });
        timeit("gs_copy ILP4 grid sms*2 x1024 (now)", cb, [&] { gs_copy<4><<<sms * 2, 1024>>>((double2 *)a, (double2 *)c, n2); });
        timeit("gs_copy ILP4 grid sms*8 x256", cb, [&] { gs_copy<4><<<sms * 8, 256>>>((double2 *)a, (double2 *)c, n2); });
        timeit("gs_copy ILP8 grid sms*2 x1024", cb, [&] { gs_copy<8><<<sms * 2, 1024>>>((double2 *)a, (double2 *)c, n2); });
        timeit("gs_copy ILP1 grid sms*2 x1024", cb, [&] { gs_copy<1><<<sms * 2, 1024>>>((double2 *)a, (double2 *)c, n2); });
        timeit("gs_copy ILP4 grid sms*32 x256", cb, [&] { gs_copy<4><<<sms * 32, 256>>>((double2 *)a, (double2 *)c, n2); });
        timeit("gs_copy_cs ILP4 grid sms*2 x1024", cb, [&] { gs_copy_cs<4><<<sms * 2, 1024>>>((double2 *)a, (double2 *)c, n2); });
        timeit("shot_copy ILP1 x256", cb, [&] { shot_copy<1><<<(n2 + 255) / 256, 256>>>((double2 *)a, (double2 *)c, n2); });
        timeit("shot_copy ILP2 x256", cb, [&] { shot_copy<2><<<(n2 + 511) / 512, 256>>>((double2 *)a, (double2 *)c, n2); });
        timeit("shot_copy ILP4 x256", cb, [&] { shot_copy<4><<<(n2 + 1023) / 1024, 256>>>((double2 *)a, (double2 *)c, n2); });
        timeit("shot_copy ILP4 x1024", cb, [&] { shot_copy<4><<<(n2 + 4095) / 4096, 1024>>>((double2 *)a, (double2 *)c, n2); });
        timeit("shot_copy ILP8 x128", cb, [&] { shot_copy<8><<<(n2 + 1023) / 1024, 128>>>((double2 *)a, (double2 *)c, n2); });
        timeit("shot_copy_cs ILP4 x256", cb, [&] { shot_copy_cs<4><<<(n2 + 1023) / 1024, 256>>>((double2 *)a, (double2 *)c, n2); });
        timeit("shot_copy_cs ILP1 x256", cb, [&] { shot_copy_cs<1><<<(n2 + 255) / 256, 256>>>((double2 *)a, (double2 *)c, n2); });
        timeit("gs_triad ILP4 sms*2 x1024 (now)", tb, [&] { gs_triad<4><<<sms * 2, 1024>>>((double2 *)a, (double2 *)b, (double2 *)c, n2); });
        timeit("shot_triad ILP2 x256", tb, [&] { shot_triad<2><<<(n2 + 511) / 512, 256>>>((double2 *)a, (double2 *)b, (double2 *)c, n2); });
        timeit("shot_triad ILP4 x256", tb, [&] { shot_triad<4><<<(n2 + 1023) / 1024, 256>>>((double2 *)a, (double2 *)b, (double2 *)c, n2); });
    }
    // 256 MiB arrays (health form)
    {
        long long m = (256LL << 20) / 8, m2 = m / 2;
        double mb = 2.0 * m * 8;
        printf("--- arrays 256 MiB\n");
        timeit(
            "memcpy D2D 256M", mb, [&] { CK(cudaMemcpyAsync(c, a, m * 8, cudaMemcpyDeviceToDevice)); }, 15, 40);
        timeit(
            "gs_copy ILP4 (now) 256M", mb, [&] { gs_copy<4><<<sms * 2, 1024>>>((double2 *)a, (double2 *)c, m2); }, 15, 40);
        timeit(
            "shot_copy ILP2 x256 256M", mb, [&] { shot_copy<2><<<(m2 + 511) / 512, 256>>>((double2 *)a, (double2 *)c, m2); }, 15, 40);
        timeit(
            "shot_copy ILP4 x256 256M", mb, [&] { shot_copy<4><<<(m2 + 1023) / 1024, 256>>>((double2 *)a, (double2 *)c, m2); }, 15, 40);
        timeit(
            "shot_copy_cs ILP4 x256 256M", mb, [&] { shot_copy_cs<4><<<(m2 + 1023) / 1024, 256>>>((double2 *)a, (double2 *)c, m2); }, 15, 40);
    }
    CK(cudaFree(b));
    CK(cudaFree(c));
    // gmem_stride under L2 fetch granularity
    size_t gdef;
    CK(cudaDeviceGetLimit(&gdef, cudaLimitMaxL2FetchGranularity));
    printf("default L2 fetch granularity %zu\n", gdef);
    long long words = 1LL << 28;  // 1 GiB of words (> 4x L2 rounded to pow2)
    unsigned *data = (unsigned *)a, *sink;
    int grid = sms * 2;
    CK(cudaMalloc(&sink, grid * 1024 * 4));
    long long strides[] = {1, 2, 4, 8, 16, 32, 64};
    size_t grans[] = {gdef, 32, 64, 128};
    for (size_t g : grans) {
        cudaError_t e = cudaDeviceSetLimit(cudaLimitMaxL2FetchGranularity, g);
        size_t got = 0;
        CK(cudaDeviceGetLimit(&got, cudaLimitMaxL2FetchGranularity));
        printf("--- gmem_stride, set granularity %zu -> %s, reads back %zu\n", g, cudaGetErrorString(e), got);
        double base = 0;
        for (long long s : strides) {
            int iters = 16;
            double bytes = (double)grid * 1024 * 8 * iters * 4;
            std::vector<float> t;
            gmem_read<<<grid, 1024>>>(data, s, words - 1 - 32 * 64, iters, sink);
            for (int r = 0; r < 9; r++) {
                CK(cudaEventRecord(e0));
                gmem_read<<<grid, 1024>>>(data, s, (words >> 1) - 1, iters, sink);
                CK(cudaEventRecord(e1));
                CK(cudaEventSynchronize(e1));
                float ms;
                CK(cudaEventElapsedTime(&ms, e0, e1));
                t.push_back(ms);
            }
            std::sort(t.begin(), t.end());
            if (s == 1)
                base = t[4];
            printf("stride %3lld: %.4f ms ratio %.3f  requested %.1f GB/s\n", s, t[4], t[4] / base, bytes / t[4] / 1e6);
        }
    }
    return 0;
}
