/*
 * cuda_device.cu - device discovery and properties, the error mapping of
 * cuda_check.cuh, and the test-only fault.  See gb_kernels.h.
 *
 * Properties come from cudaGetDeviceProperties plus cudaDeviceGetAttribute
 * for the fields CUDA 13 removed from cudaDeviceProp (clock rates).
 */
#include <stdio.h>
#include <string.h>

#include "cuda_check.cuh"

static bool is_sticky(cudaError_t e)
{
    switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorContextIsDestroyed:
    case cudaErrorDevicesUnavailable:
        return true;
    default:
        return false;
    }
}

int gb_cuda_check(cudaError_t e, const char *call, struct gb_cuda_error *err)
{
    if (e == cudaSuccess)
        return 0;
    if (err->name[0] != '\0')
        return -1;
    snprintf(err->call, sizeof(err->call), "%s", call);
    snprintf(err->name, sizeof(err->name), "%s", cudaGetErrorName(e));
    snprintf(err->text, sizeof(err->text), "%s", cudaGetErrorString(e));
    /* An error missing from the list is still fatal if the context now
     * refuses a plain synchronisation. */
    err->fatal = is_sticky(e) || cudaDeviceSynchronize() != cudaSuccess;
    return -1;
}

int gb_cuda_check_launch(const char *what, struct gb_cuda_error *err)
{
    return gb_cuda_check(cudaGetLastError(), what, err);
}

int gb_backend_has_cuda(void)
{
    return 1;
}

int gb_device_count(int *count, char *reason, size_t reason_cap)
{
    cudaError_t e = cudaGetDeviceCount(count);

    if (e != cudaSuccess) {
        *count = 0;
        snprintf(reason, reason_cap, "cudaGetDeviceCount: %s: %s",
                 cudaGetErrorName(e), cudaGetErrorString(e));
        return -1;
    }
    if (*count == 0)
        snprintf(reason, reason_cap, "cudaGetDeviceCount found no device");
    return 0;
}

static void format_uuid(const cudaUUID_t *u, char *out, size_t cap)
{
    const unsigned char *b = (const unsigned char *)u->bytes;
    snprintf(out, cap,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
             "%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9],
             b[10], b[11], b[12], b[13], b[14], b[15]);
}

int gb_device_query(int index, struct gb_device_info *out,
                    struct gb_cuda_error *err)
{
    cudaDeviceProp p;

    memset(out, 0, sizeof(*out));
    if (gb_cuda_check(cudaGetDeviceProperties(&p, index),
                      "cudaGetDeviceProperties", err) != 0)
        return -1;
    if (gb_cuda_check(cudaDeviceGetAttribute(&out->max_clock_khz,
                                             cudaDevAttrClockRate, index),
                      "cudaDeviceGetAttribute(ClockRate)", err) != 0 ||
        gb_cuda_check(cudaDeviceGetAttribute(&out->max_mem_clock_khz,
                                             cudaDevAttrMemoryClockRate, index),
                      "cudaDeviceGetAttribute(MemoryClockRate)", err) != 0 ||
        gb_cuda_check(cudaDeviceGetPCIBusId(out->pci_bus_id,
                                            (int)sizeof(out->pci_bus_id), index),
                      "cudaDeviceGetPCIBusId", err) != 0)
        return -1;
    out->index = index;
    snprintf(out->name, sizeof(out->name), "%s", p.name);
    format_uuid(&p.uuid, out->uuid, sizeof(out->uuid));
    out->cc_major = p.major;
    out->cc_minor = p.minor;
    out->sm_count = p.multiProcessorCount;
    out->memory_bytes = (long long)p.totalGlobalMem;
    out->bus_width_bits = p.memoryBusWidth;
    out->l2_bytes = p.l2CacheSize;
    out->smem_per_sm_bytes = (int)p.sharedMemPerMultiprocessor;
    out->smem_per_block_bytes = (int)p.sharedMemPerBlock;
    out->smem_per_block_optin_bytes = (int)p.sharedMemPerBlockOptin;
    out->max_threads_per_sm = p.maxThreadsPerMultiProcessor;
    return 0;
}

int gb_device_open(int index, struct gb_cuda_error *err)
{
    if (gb_cuda_check(cudaSetDevice(index), "cudaSetDevice", err) != 0)
        return -1;
    /* cudaFree(0) is the customary way to create the context now. */
    return gb_cuda_check(cudaFree(0), "cudaFree(0) (context creation)", err);
}

void gb_cuda_versions(int *driver, int *runtime)
{
    if (cudaDriverGetVersion(driver) != cudaSuccess)
        *driver = 0;
    if (cudaRuntimeGetVersion(runtime) != cudaSuccess)
        *runtime = 0;
}

__global__ void write_through(int *p)
{
    *p = 1;
}

int gb_fault_illegal_address(struct gb_cuda_error *err)
{
    /* An address no allocation covers: the kernel faults, and the error
     * is sticky. */
    write_through<<<1, 1>>>((int *)(uintptr_t)0x10);
    if (gb_cuda_check_launch("fault launch", err) != 0)
        return -1;
    return gb_cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize", err);
}

__global__ void spin_until_set(const volatile int *flag)
{
    while (*flag == 0)
        ;
}

int gb_hang_forever(struct gb_cuda_error *err)
{
    int *flag = NULL;

    /* Nothing ever sets the flag: the kernel runs until the process dies. */
    if (gb_cuda_check(cudaMalloc(&flag, sizeof(int)), "cudaMalloc(flag)", err) != 0 ||
        gb_cuda_check(cudaMemset(flag, 0, sizeof(int)), "cudaMemset(flag)", err) != 0)
        return -1;
    spin_until_set<<<1, 1>>>(flag);
    if (gb_cuda_check_launch("hang launch", err) != 0)
        return -1;
    return gb_cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize", err);
}
