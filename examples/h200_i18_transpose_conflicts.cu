// Where do tile33's extra "bank conflicts" come from?  Variants of the
// transpose with the global load and/or store taken out, under ncu.
#include <cstdio>
#include <cstdlib>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("ERR %s: %s\n", #x, cudaGetErrorString(e_)); exit(1);} } while (0)
static const int T = 32, R = 8;
template <int PAD, bool GLOAD, bool GSTORE>
__global__ void tr(const float *__restrict__ in, float *__restrict__ out, int n) {
  __shared__ float tile[T][T + PAD];
  int x = blockIdx.x * T + threadIdx.x, y = blockIdx.y * T + threadIdx.y;
  for (int j = 0; j < T; j += R) {
    int r = threadIdx.y + j;
    tile[r][threadIdx.x] = GLOAD ? in[(size_t)(y + j) * n + x] : (float)(x * 3 + y + j);
  }
  __syncthreads();
  x = blockIdx.y * T + threadIdx.x; y = blockIdx.x * T + threadIdx.y;
  float acc = 0;
  for (int j = 0; j < T; j += R) {
    int c = threadIdx.y + j;
    float v = tile[threadIdx.x][c];
    if (GSTORE) out[(size_t)(y + j) * n + x] = v; else acc += v;
  }
  if (!GSTORE) out[(size_t)y * n + x] = acc;
}
int main() {
  int n = 8192; float *in, *out; CK(cudaMalloc(&in, (size_t)n*n*4)); CK(cudaMalloc(&out, (size_t)n*n*4)); CK(cudaMemset(in, 0, (size_t)n*n*4));
  dim3 g(n / T, n / T), b(T, R);
  for (int rep = 0; rep < 2; rep++) {
    tr<1, true, true><<<g, b>>>(in, out, n);
    tr<1, false, true><<<g, b>>>(in, out, n);
    tr<1, true, false><<<g, b>>>(in, out, n);
    tr<1, false, false><<<g, b>>>(in, out, n);
    tr<0, true, true><<<g, b>>>(in, out, n);
    tr<0, false, false><<<g, b>>>(in, out, n);
  }
  CK(cudaDeviceSynchronize());
  printf("order: pad1 load+store, pad1 store only, pad1 load only, pad1 neither, pad0 load+store, pad0 neither (x2)\n");
  return 0;
}
// tile33's extra counted conflicts: one block an SM (no other block's
// stores beside a block's column reads) against the usual occupancy.
#include <cstdio>
#include <cstdlib>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("ERR %s: %s\n", #x, cudaGetErrorString(e_)); exit(1);} } while (0)
static const int T = 32;
template <int PAD>
__global__ void tr(const float *__restrict__ in, float *__restrict__ out, int n) {
  extern __shared__ float pad_[]; // only to limit occupancy
  __shared__ float tile[T][T + PAD];
  int R = blockDim.y;
  int x = blockIdx.x * T + threadIdx.x, y = blockIdx.y * T + threadIdx.y;
  for (int j = 0; j < T; j += R) tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * n + x];
  __syncthreads();
  x = blockIdx.y * T + threadIdx.x; y = blockIdx.x * T + threadIdx.y;
  for (int j = 0; j < T; j += R) out[(size_t)(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
  if (n < 0) pad_[threadIdx.x] = 0;
}
int main() {
  int n = 8192; float *in, *out; CK(cudaMalloc(&in, (size_t)n*n*4)); CK(cudaMalloc(&out, (size_t)n*n*4)); CK(cudaMemset(in, 0, (size_t)n*n*4));
  int big = 160 * 1024;
  CK(cudaFuncSetAttribute(tr<1>, cudaFuncAttributeMaxDynamicSharedMemorySize, big));
  CK(cudaFuncSetAttribute(tr<0>, cudaFuncAttributeMaxDynamicSharedMemorySize, big));
  dim3 g(n / T, n / T);
  tr<1><<<g, dim3(32, 8)>>>(in, out, n);           // usual: 8 blocks an SM
  tr<1><<<g, dim3(32, 8), big>>>(in, out, n);      // one block an SM, 8 warps
  tr<1><<<g, dim3(32, 1), big>>>(in, out, n);      // one block an SM, one warp
  tr<1><<<g, dim3(32, 1)>>>(in, out, n);           // one warp a block, many blocks
  tr<0><<<g, dim3(32, 8)>>>(in, out, n);
  tr<0><<<g, dim3(32, 8), big>>>(in, out, n);
  CK(cudaDeviceSynchronize());
  return 0;
}
