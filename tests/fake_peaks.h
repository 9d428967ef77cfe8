/*
 * fake_peaks.h - the test double's SYNTHETIC rows for the issue 16
 * benchmarks (gmem_stride, hbm_bandwidth, compute_peak, pcie_bandwidth,
 * p2p_bandwidth) and issue 37's nccl_allreduce, in the row shapes of
 * I16_CONTRACT.md: label, value, unit,
 * peak, peak_source, share_of_peak and each benchmark's own fields.  The
 * numbers are made up, near an H200's; nothing here was measured.
 *
 * Params are read where the worker's table gives them and fall back to a
 * fixed set, since the double must not guess the real worker's defaults.
 */
#ifndef GPUBENCH_FAKE_PEAKS_H
#define GPUBENCH_FAKE_PEAKS_H

#include <cjson/cJSON.h>

/* 1 when the double draws rows for bench here. */
int fake_peaks_knows(const char *bench);

/* The rows of bench (each with synthetic_ms, which the caller turns into
 * timings), for a node of gpus GPUs; mode "link_degraded" makes the PCIe
 * link gen 4 of 5.  A NEW array the caller owns. */
cJSON *fake_peaks_rows(const char *bench, const cJSON *params, const char *mode, int gpus);

/* After the timing fields are made (median_ms): the fields derived from
 * them (nccl_allreduce's time_us, algbw_gbps, busbw_gbps and value). */
void fake_peaks_finish(const char *bench, cJSON *rows);

/* Adds bench's run-level fields to summary and meta (meta.link). */
void fake_peaks_summary(const char *bench, const char *mode, int gpus, cJSON *summary,
                        cJSON *meta);

#endif
