/*
 * store_retention.c - see store_retention.h.  Each batch is one short
 * write transaction, so runs keep ending while a long pass goes on; the
 * VACUUM at the end holds the writer for as long as the file takes to
 * copy (seconds a GB), once a pass, and only after a pass that dropped
 * something.
 */
#include "store_retention.h"

#include "log.h"
#include "store_internal.h"
#include "timeutil.h"

#include <inttypes.h>
#include <stdio.h>

#define BATCH_RUNS 500

/* The database's size in bytes (page_count x page_size), or -1. */
static int64_t file_bytes(struct store *s)
{
    struct store_query q;
    int64_t bytes = -1;
    int rc;

    store_query_begin(&q, store_reader(s), "read the database's size");
    rc = store_query_prepare(&q, "SELECT page_count * page_size FROM pragma_page_count(), "
                                 "pragma_page_size()");
    if (rc == STORE_OK && (rc = store_query_one(&q)) == STORE_OK)
        bytes = sqlite3_column_int64(q.st, 0);
    store_query_end(&q, rc);
    return bytes;
}

int store_drop_samples(struct store *s, const struct store_retention *r, long *dropped,
                       int64_t *bytes_before, int64_t *bytes_after)
{
    /* clang-format off */
    static const char sql[] =
        "UPDATE run_results SET samples_dropped = 1, results = json_set(results, '$.rows', "
        "(SELECT json_group_array(json_remove(value, '$.samples')) "
        "FROM json_each(run_results.results, '$.rows'))) "
        "WHERE run_id IN (SELECT rr.run_id FROM run_results rr JOIN runs r ON r.id = rr.run_id "
        "WHERE rr.samples_dropped IS NULL AND rr.run_id < ?1 "
        /* a card's newest runs of a key stay whole: its history */
        "AND NOT (r.verdict_key IS NOT NULL AND r.valid IS NOT 0 AND r.device_uuid IS NOT NULL "
        "AND (SELECT count(*) FROM (SELECT 1 FROM runs n WHERE n.device_uuid = r.device_uuid "
        "AND n.host = r.host AND n.verdict_key = r.verdict_key AND n.verdict_key IS NOT NULL "
        "AND n.valid IS NOT 0 AND n.id > r.id LIMIT ?2)) < ?2) "
        "LIMIT ?3)";
    /* clang-format on */
    int64_t cutoff_ms = time_now_unix_ms() - r->keep_samples_s * 1000;
    char cutoff[32];
    int changes, rc = STORE_OK;

    *dropped = 0;
    *bytes_before = *bytes_after = file_bytes(s);
    if (r->keep_samples_s <= 0 || cutoff_ms <= 0)
        return STORE_OK;
    /* A UUIDv7's first 48 bits are its creation's Unix milliseconds, as
     * 12 hex digits (8, a dash, 4): ids before this prefix are older. */
    snprintf(cutoff, sizeof(cutoff), "%08" PRIx64 "-%04" PRIx64, (uint64_t)cutoff_ms >> 16,
             (uint64_t)cutoff_ms & 0xffff);
    do {
        struct store_query q;
        store_query_begin(&q, &s->writer, "drop old runs' samples");
        changes = 0;
        rc = store_query_run(&q, sql, &changes, STORE_TEXT(cutoff), STORE_INT(r->keep_newest),
                             STORE_INT(BATCH_RUNS));
        rc = store_query_end(&q, rc);
        *dropped += changes;
    } while (rc == STORE_OK && changes == BATCH_RUNS);
    if (rc == STORE_OK && *dropped > 0) {
        struct store_query q;
        store_query_begin(&q, &s->writer, "VACUUM after dropping samples");
        rc = store_query_prepare(&q, "VACUUM");
        if (rc == STORE_OK)
            rc = store_query_exec(&q, NULL);
        rc = store_query_end(&q, rc);
    }
    /* A VACUUM in WAL mode writes the whole new file into the WAL, which
     * then keeps that size beside the smaller file until the daemon stops
     * (12 GB shrunk to 10 GB left a WAL of 10 GB: bench/RESULTS.md): a
     * checkpoint that truncates it (one a reader holds back stays; the
     * next pass tries again). */
    if (rc == STORE_OK && *dropped > 0) {
        struct store_query q;
        store_query_begin(&q, &s->writer, "truncate the WAL after VACUUM");
        rc = store_query_prepare(&q, "PRAGMA wal_checkpoint(TRUNCATE)");
        if (rc == STORE_OK)
            rc = store_query_one(&q) == STORE_ERROR ? STORE_ERROR : STORE_OK;
        rc = store_query_end(&q, rc);
    }
    *bytes_after = file_bytes(s);
    return rc;
}
