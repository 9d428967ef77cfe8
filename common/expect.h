/*
 * expect.h - what a healthy card of each model must reach on the health
 * suite's rows: one table of floors per card model, each with
 * its source, and the pure judge that checks a run's rows against them
 * (README "Expected values").
 *
 * A card model is matched on meta.device.name, exactly, against the names
 * the driver gives the model (CUDA's and NVML's device name); a name not
 * in the table is an unknown model, whose checks say so rather than guess.
 * A floor is one of three kinds: a fixed figure (HBM, compute), a share of
 * the PCIe link the run's meta.link reports (gen_current x width_current,
 * else the maximum), or a share of a per-link NVLink rate times the links
 * the p2p row's link reports.  So a card on a narrower link is judged
 * against that link (Azure/azurehpc-health-checks#162: fixed floors fail
 * healthy cards on narrower links), and a link below its maximum is
 * validity's link_degraded, not a missed floor.
 */
#ifndef GPUBENCH_COMMON_EXPECT_H
#define GPUBENCH_COMMON_EXPECT_H

#include <cjson/cJSON.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How a floor's figure becomes a number to reach. */
enum gb_floor_basis {
    GB_FLOOR_FIXED,      /* figure x fraction */
    GB_FLOOR_PCIE_LINK,  /* fraction x gb_pcie_link_gbps(gen, width) of meta.link */
    GB_FLOOR_PER_NVLINK, /* figure (GB/s a link, one way) x links x fraction */
    GB_FLOOR_NODE,       /* figure x fraction, of a run over every GPU of the node
                          * (nccl_allreduce): it judges the node, not one card */
    /* a ceiling, not a floor: the row's slowdown_temperature_c (NVML's
     * threshold, read by the run) less figure degrees; a check of it has
     * "ceiling" in place of "floor" and passes at or under it */
    GB_CEILING_SLOWDOWN_TEMP,
};

/* One floor: the rows of benchmark whose row name (gb_expect_row_name) is
 * row must reach it. */
struct gb_floor {
    const char *benchmark;
    const char *row;
    enum gb_floor_basis basis;
    double figure;
    double fraction;
    const char *unit;
    const char *source;
};

struct gb_card_model {
    const char *model;    /* "H200 SXM" */
    const char *names[4]; /* the device names it goes by, NULL-ended */
    const struct gb_floor *floors;
    int nfloors;
};

/* The model whose names hold device_name exactly, or NULL.  Static. */
const struct gb_card_model *gb_expect_model(const char *device_name);

/* Whether benchmark has rows any model has a floor for. */
int gb_expect_benchmark_checked(const char *benchmark);

/* Whether model m has a floor of the card itself (fixed or its PCIe link)
 * for a row of benchmark: what a card must run and meet to show it works
 * (the end of a one-off card event, store_card_events.h).  A per-NVLink
 * floor is not one: it judges a pair of cards, and p2p_bandwidth runs once
 * a node, on its lowest GPU, and not at all on a node of one.  0 for a
 * NULL m or benchmark. */
int gb_expect_card_floored(const struct gb_card_model *m, const char *benchmark);

/* The name a row of benchmark is checked under, into buf (cap): the
 * kernel of hbm_bandwidth ("triad"), the kind of compute_peak
 * ("gemm_bf16"), the direction of pcie_bandwidth's pinned rows of the
 * run's largest size ("h2d"), "peer" for p2p_bandwidth's one-way bandwidth
 * rows, "busbw_16g_8gpu" for nccl_allreduce's row of 16 GiB over 8 GPUs
 * whose links are NVLink (the one size and topology with a published
 * floor).  0 when the row has none (it is not checked), else 1.  largest_pinned
 * is the largest bytes of the run's pinned rows. */
int gb_expect_row_name(const char *benchmark, const cJSON *row, double largest_pinned,
                       char *buf, size_t cap);

/* Judges a run: a NEW array of {"row", "value", "unit", "floor", "source",
 * "pass"} a checked row, in the rows' order ("row" its label; floor and
 * pass null where the card model is unknown, and the source says so), or
 * NULL where benchmark has no floors (nothing to check) or out of memory.
 * A ceiling's check has "ceiling" in place of "floor" (the value must not
 * pass it).  The deep checks (expect_deep.h) add their own: known_answer's
 * and memtest's exact checks ("exact": true, "message" naming the SM or
 * the address, for any card model) and soak's summary rows and
 * "slowdown".
 * results is {"rows": [...]}, meta the run's (device.name, link); either
 * may be NULL. */
cJSON *gb_checks_judge(const char *benchmark, const cJSON *results, const cJSON *meta);

/* How many checks of a gb_checks_judge array did not pass (-1 for NULL). */
int gb_checks_failed(const cJSON *checks);

/* A card's state (GET /cards, /coverage, `gpubench check`), as the
 * daemon's judge (server/judge/card_state.c) gives it; every list of the
 * states (/metrics, the check's textfile) walks gb_card_state_names. */
enum gb_card_state {
    GB_CARD_HEALTHY,  /* no fault, a valid health run within the window */
    GB_CARD_DEGRADED, /* a confirmed missed floor or a critical card event */
    GB_CARD_UNKNOWN,  /* no valid health run within the window */
    GB_CARD_STATES,
};
extern const char *const gb_card_state_names[GB_CARD_STATES];

#ifdef __cplusplus
}
#endif

#endif
