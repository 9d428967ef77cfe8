/*
 * store_copy.c - see store_copy.h.
 *
 * Why not the sqlite3 shell's .recover: it reads raw pages through the
 * sqlite_dbpage virtual table, which Debian 12's libsqlite3 (3.40.1) is
 * built without (no SQLITE_ENABLE_DBPAGE_VTAB), so there it fails with
 * "SQL logic error" on any file, an intact one included.  This recovery
 * uses only SQL that every build of SQLite has: the damaged file is
 * opened read-only and each table is read in rowid order; when a step
 * fails (a damaged leaf, interior or overflow page), the next rowid that
 * reads is found and the stretch in between is skipped and reported.  The
 * rowids after the failure are listed by one of the table's own indexes
 * (whole ones, not partial; its b-tree is other pages than the table's)
 * and each is tried in turn: the first that reads is where the copy goes
 * on, whichever leaves around it are damaged (first, last, several).
 * Only where no index reads are they searched for by probing forward
 * (doubling, then halving back), which can miss rows between two damaged
 * stretches.  No row is taken from an index: the new file's are built as
 * rows go in.
 *
 * The new file is made at the damaged file's schema version, filled, and
 * then migrated, so that a recovery of an older database goes through the
 * same migrations (and their backfills) as an upgrade.
 */
#include "store_copy.h"
#include "dynbuf.h"
#include "migrate.h"
#include "store.h"
#include "store_json_damage.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* How long a backup waits for a busy source (a checkpoint, WAL recovery)
 * before it gives up. */
#define BUSY_WAIT_MS 30000
#define SQL_CAP (64 * 1024)
/* Damaged stretches named one by one in the report; more are counted. */
#define RANGES_SHOWN 20

/* The temporary name of dest: beside it (so the link is within one
 * filesystem), named for this process. */
static int temp_name(const char *dest, char *out, size_t cap)
{
    int n = snprintf(out, cap, "%s.partial-%ld", dest, (long)getpid());

    return n > 0 && (size_t)n < cap ? 0 : -1;
}

static int dest_free(const char *dest, char *err, size_t cap)
{
    struct stat st;

    if (lstat(dest, &st) == 0) {
        snprintf(err, cap, "%s exists: refusing to overwrite it (give a new name, or "
                           "move it away first)",
                 dest);
        return -1;
    }
    return 0;
}

/* 1 when db's schema named schema holds gpubench's runs table, 0 when not,
 * -1 when it could not be read. */
static int has_runs_table(sqlite3 *db, const char *schema)
{
    sqlite3_stmt *st = NULL;
    char sql[160];
    int rc = -1;

    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM \"%s\".sqlite_schema WHERE type = 'table' AND name = 'runs'",
             schema);
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        rc = sqlite3_column_int(st, 0) > 0;
    sqlite3_finalize(st);
    return rc;
}

static int one_int(sqlite3 *db, const char *sql, long *v)
{
    sqlite3_stmt *st = NULL;
    int rc = -1;

    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
        *v = (long)sqlite3_column_int64(st, 0);
        rc = 0;
    }
    sqlite3_finalize(st);
    return rc;
}

/* The first bytes of every SQLite database file. */
static const char sqlite_header[16] = "SQLite format 3";

/* Whether path is a SQLite file at all, by its header: 1, or 0 with what
 * it is instead in why; -1 when it cannot be read (errbuf says why). */
static int is_sqlite_file(const char *path, char *why, size_t why_cap, char *errbuf, size_t cap)
{
    char head[sizeof(sqlite_header)], wal[4200];
    struct stat st;
    FILE *f;
    size_t got;

    if (stat(path, &st) != 0) {
        snprintf(errbuf, cap, "cannot check %s: %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(why, why_cap, "not a file");
        return 0;
    }
    if (st.st_size == 0) {
        /* A daemon killed before its first checkpoint may have all of it
         * in the -wal: that is SQLite's to read. */
        snprintf(wal, sizeof(wal), "%s-wal", path);
        if (stat(wal, &st) == 0 && st.st_size > 0)
            return 1;
        snprintf(why, why_cap, "an empty file (0 bytes): no database was ever written to it");
        return 0;
    }
    f = fopen(path, "rb");
    if (f == NULL) {
        snprintf(errbuf, cap, "cannot check %s: %s", path, strerror(errno));
        return -1;
    }
    got = fread(head, 1, sizeof(head), f);
    fclose(f);
    if (got == sizeof(head) && memcmp(head, sqlite_header, sizeof(head)) == 0)
        return 1;
    snprintf(why, why_cap,
             "not a SQLite database: its first bytes are not SQLite's header (if this was "
             "gpubench's database, its first page was overwritten and nothing in it can be "
             "found again: restore a backup)");
    return 0;
}

/* PRAGMA integrity_check's findings on db, printed to out; their count,
 * or -1 when the check could not go on for another reason than damage. */
static int integrity_findings(sqlite3 *db, FILE *out)
{
    sqlite3_stmt *st = NULL;
    int code, step = SQLITE_DONE, findings = 0;

    /* At most 1000 findings: enough to judge, and bounded. */
    code = sqlite3_prepare_v2(db, "PRAGMA integrity_check(1000)", -1, &st, NULL);
    while (code == SQLITE_OK && (step = sqlite3_step(st)) == SQLITE_ROW) {
        const char *line = (const char *)sqlite3_column_text(st, 0);
        if (line && strcmp(line, "ok") == 0)
            continue;
        findings++;
        fprintf(out, "  %s\n", line ? line : "(a finding SQLite could not print)");
    }
    if (code == SQLITE_OK && step != SQLITE_DONE)
        code = step;
    if (code != SQLITE_OK) {
        /* The check itself could not go on: damage where it must read
         * first (the header, the schema) is damage too. */
        if (store_rc_from_sqlite(sqlite3_extended_errcode(db), sqlite3_system_errno(db)) !=
            STORE_CORRUPT) {
            findings = -1;
        } else {
            findings++;
            fprintf(out, "  %s\n", sqlite3_errmsg(db));
        }
    }
    sqlite3_finalize(st);
    return findings;
}

int store_check_file(const char *path, FILE *out, struct store_file_check *res, char *errbuf,
                     size_t cap)
{
    sqlite3 *db = NULL;
    long version = -1, damaged_values;
    int rc = STORE_ERROR, sqlite_file, findings;

    memset(res, 0, sizeof(*res));
    sqlite_file = is_sqlite_file(path, res->why, sizeof(res->why), errbuf, cap);
    if (sqlite_file < 0)
        return STORE_ERROR;
    if (sqlite_file == 0) {
        res->state = STORE_FILE_NOT_GPUBENCH;
        return STORE_OK;
    }
    /* Read-only, and no journal mode change: a daemon may be running on
     * the file; this only reads a snapshot beside it. */
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        snprintf(errbuf, cap, "cannot open %s: %s", path,
                 db ? sqlite3_errmsg(db) : "out of memory");
        goto done;
    }
    sqlite3_busy_timeout(db, 5000);
    findings = integrity_findings(db, out);
    if (findings < 0) {
        snprintf(errbuf, cap, "cannot check %s: %s", path, sqlite3_errmsg(db));
        goto done;
    }
    if (findings > 0) {
        res->state = STORE_FILE_DAMAGED;
        rc = STORE_OK;
        goto done;
    }
    if (has_runs_table(db, "main") != 1 || one_int(db, "PRAGMA user_version", &version) != 0 ||
        version <= 0 || one_int(db, "SELECT count(*) FROM runs", &res->runs) != 0) {
        res->state = STORE_FILE_NOT_GPUBENCH;
        snprintf(res->why, sizeof(res->why),
                 "a SQLite database, but not gpubench's: it has no runs table at a gpubench "
                 "schema version (another program's, or the empty result of a recovery that "
                 "failed)");
        rc = STORE_OK;
        goto done;
    }
    res->schema_version = (int)version;
    /* Values cut short or overwritten inside pages whose b-trees are whole:
     * the integrity check cannot see them; each is named. */
    damaged_values = store_json_damage_list(db, out);
    if (damaged_values < 0) {
        snprintf(errbuf, cap, "cannot check the JSON values of %s: %s", path, sqlite3_errmsg(db));
        goto done;
    }
    res->state = damaged_values > 0 ? STORE_FILE_DAMAGED : STORE_FILE_INTACT;
    rc = STORE_OK;

done:
    sqlite3_close(db);
    return rc;
}

/* Checks the finished copy at tmp (integrity_check must say ok; it must
 * be a gpubench database), fills report, makes it durable and links it to
 * dest (failing, never replacing, when dest appeared meanwhile). */
static int finish_copy(const char *tmp, const char *dest, struct store_copy_report *report,
                       char *err, size_t cap)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    const char *line;
    long version = -1;
    int rc = STORE_ERROR, fd = -1;

    if (sqlite3_open_v2(tmp, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        snprintf(err, cap, "cannot open the copy %s: %s", tmp,
                 db ? sqlite3_errmsg(db) : "out of memory");
        goto done;
    }
    if (sqlite3_prepare_v2(db, "PRAGMA integrity_check(1)", -1, &st, NULL) != SQLITE_OK ||
        sqlite3_step(st) != SQLITE_ROW) {
        snprintf(err, cap, "cannot check the copy: %s", sqlite3_errmsg(db));
        goto done;
    }
    line = (const char *)sqlite3_column_text(st, 0);
    if (line == NULL || strcmp(line, "ok") != 0) {
        snprintf(err, cap, "the copy fails its integrity check: %s", line ? line : "?");
        goto done;
    }
    if (has_runs_table(db, "main") != 1 || one_int(db, "PRAGMA user_version", &version) != 0 ||
        one_int(db, "SELECT count(*) FROM runs", &report->runs) != 0) {
        snprintf(err, cap, "the copy holds no gpubench runs table: %s", sqlite3_errmsg(db));
        goto done;
    }
    report->schema_version = (int)version;
    fd = open(tmp, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fsync(fd) != 0) {
        snprintf(err, cap, "cannot sync the copy %s: %s", tmp, strerror(errno));
        goto done;
    }
    /* link, not rename: rename would replace a dest made meanwhile. */
    if (link(tmp, dest) != 0) {
        snprintf(err, cap, "cannot put the copy at %s: %s%s", dest, strerror(errno),
                 errno == EEXIST ? " (refusing to overwrite it)" : "");
        goto done;
    }
    rc = STORE_OK;

done:
    if (fd >= 0)
        close(fd);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return rc;
}

int store_backup_file(const char *src, const char *dest, FILE *out,
                      struct store_copy_report *report, char *err, size_t cap)
{
    sqlite3 *from = NULL, *to = NULL;
    sqlite3_backup *b = NULL;
    char tmp[4096];
    int rc = STORE_ERROR, step = SQLITE_OK, waited_ms = 0, made_tmp = 0;

    memset(report, 0, sizeof(*report));
    if (dest_free(dest, err, cap) != 0)
        return STORE_ERROR;
    if (temp_name(dest, tmp, sizeof(tmp)) != 0) {
        snprintf(err, cap, "%s: path too long", dest);
        return STORE_ERROR;
    }
    /* Read-only: a running daemon keeps its own connections, its lock and
     * its WAL; this is one more reader beside them. */
    if (sqlite3_open_v2(src, &from, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        snprintf(err, cap, "cannot open %s: %s", src,
                 from ? sqlite3_errmsg(from) : "out of memory");
        goto done;
    }
    sqlite3_busy_timeout(from, BUSY_WAIT_MS);
    if (has_runs_table(from, "main") != 1) {
        snprintf(err, cap, "%s is not a gpubench database (no runs table%s%s)", src,
                 sqlite3_errcode(from) != SQLITE_OK ? ": " : "",
                 sqlite3_errcode(from) != SQLITE_OK ? sqlite3_errmsg(from) : "");
        goto done;
    }
    made_tmp = 1;
    unlink(tmp); /* one this process id left once, killed mid-copy */
    if (sqlite3_open_v2(tmp, &to, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
        snprintf(err, cap, "cannot create %s: %s", tmp, to ? sqlite3_errmsg(to) : "out of memory");
        goto done;
    }
    b = sqlite3_backup_init(to, "main", from, "main");
    if (b == NULL) {
        snprintf(err, cap, "cannot start the backup: %s", sqlite3_errmsg(to));
        goto done;
    }
    /* All pages in one step: one read transaction, so the copy is one
     * snapshot.  A step of a few pages would restart whenever the daemon
     * commits between steps, and might never finish on a busy node. */
    while ((step = sqlite3_backup_step(b, -1)) == SQLITE_BUSY || step == SQLITE_LOCKED) {
        struct timespec pause = {0, 100 * 1000 * 1000L};

        if (waited_ms >= BUSY_WAIT_MS)
            break;
        nanosleep(&pause, NULL);
        waited_ms += 100;
    }
    if (step != SQLITE_DONE) {
        snprintf(err, cap, "the backup of %s stopped: %s", src, sqlite3_errstr(step));
        goto done;
    }
    if (sqlite3_backup_finish(b) != SQLITE_OK) {
        b = NULL;
        snprintf(err, cap, "the backup of %s failed: %s", src, sqlite3_errmsg(to));
        goto done;
    }
    b = NULL;
    /* The copy stands alone as one file: no -wal to carry with it. */
    if (sqlite3_exec(to, "PRAGMA journal_mode = DELETE", NULL, NULL, NULL) != SQLITE_OK) {
        snprintf(err, cap, "cannot finish %s: %s", tmp, sqlite3_errmsg(to));
        goto done;
    }
    sqlite3_close(to);
    to = NULL;
    if (finish_copy(tmp, dest, report, err, cap) != STORE_OK)
        goto done;
    fprintf(out, "backed up %s to %s: %ld runs, schema version %d, integrity ok\n", src, dest,
            report->runs, report->schema_version);
    rc = STORE_OK;

done:
    if (b)
        sqlite3_backup_finish(b);
    sqlite3_close(to);
    sqlite3_close(from);
    if (made_tmp)
        unlink(tmp); /* linked into place, or a partial copy: never left */
    return rc;
}

/* One table's copy from the damaged file (src) into the new one (dst):
 * the statements, and what was skipped. */
struct table_copy {
    sqlite3 *src, *dst;
    const char *table;
    sqlite3_stmt *read_from; /* rows with rowid >= ?1, in rowid order */
    sqlite3_stmt *read_one;  /* the first row with rowid >= ?1 */
    sqlite3_stmt *insert;
    int ncols;    /* columns copied, rowid not counted */
    int rowid;    /* 0: a WITHOUT ROWID table, read in one pass */
    long copied;  /* rows stored */
    long refused; /* rows read that the new file refused (a constraint) */
    FILE *out;
    int *ranges; /* the report's count of skipped stretches */
};

/* Reads step's row into the insert: 0, or -1 when it could not be
 * stored for a reason other than a constraint. */
static int copy_row(struct table_copy *t, sqlite3_stmt *from)
{
    int rc;

    for (int i = 0; i < t->ncols + t->rowid; i++)
        sqlite3_bind_value(t->insert, i + 1, sqlite3_column_value(from, i));
    rc = sqlite3_step(t->insert);
    sqlite3_reset(t->insert);
    if (rc != SQLITE_DONE && (rc & 0xff) != SQLITE_CONSTRAINT)
        return -1;
    if (rc == SQLITE_DONE && sqlite3_changes(t->dst) > 0)
        t->copied++;
    else
        t->refused++;
    return 0;
}

/* Whether the first row at or after rowid reads: 1 (its rowid in *at),
 * 2 when there is none, 0 when reading it fails. */
static int probe(struct table_copy *t, sqlite3_int64 rowid, sqlite3_int64 *at)
{
    int rc;

    sqlite3_reset(t->read_one);
    sqlite3_bind_int64(t->read_one, 1, rowid);
    rc = sqlite3_step(t->read_one);
    if (rc == SQLITE_ROW)
        *at = sqlite3_column_int64(t->read_one, 0);
    sqlite3_reset(t->read_one);
    return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 2
                                                    : 0;
}

static void note_range(struct table_copy *t, sqlite3_int64 from, sqlite3_int64 to, int to_end)
{
    if (*t->ranges < RANGES_SHOWN) {
        if (from == INT64_MIN && to_end)
            fprintf(t->out, "  %s: no row could be read\n", t->table);
        else if (from == INT64_MIN)
            fprintf(t->out, "  %s: rows up to rowid %lld could not be read\n", t->table,
                    (long long)to);
        else if (to_end)
            fprintf(t->out, "  %s: rows from rowid %lld to the end could not be read\n",
                    t->table, (long long)from);
        else
            fprintf(t->out, "  %s: rows with rowid %lld to %lld could not be read\n", t->table,
                    (long long)from, (long long)to);
    }
    (*t->ranges)++;
}

/* The first rowid after a failure at next that reads again: doubling the
 * step until a probe reads (or finds the end), then halving back to the
 * smallest start that reads.  Returns 1 with *resume set, or 0 at the
 * end of the table.  The distances are unsigned: from INT64_MIN (a first
 * leaf damaged, nothing read yet) the rowids a table uses lie 2^63 away,
 * a step no int64_t holds. */
static int skip_damage(struct table_copy *t, sqlite3_int64 next, sqlite3_int64 *resume)
{
    uint64_t span = (uint64_t)INT64_MAX - (uint64_t)next, step = 1;
    sqlite3_int64 lo = next, hi, at = 0;
    int found = 0;

    for (;;) {
        hi = step >= span ? INT64_MAX : (sqlite3_int64)((uint64_t)next + step);
        found = probe(t, hi, &at);
        if (found != 0)
            break;
        if (hi == INT64_MAX) {
            note_range(t, next, 0, 1);
            return 0;
        }
        lo = hi;
        step = step > span / 2 ? span : step * 2;
    }
    /* Probes in (lo, hi] narrow it: lo fails, hi reads (or is past the end). */
    while ((uint64_t)hi - (uint64_t)lo > 1) {
        sqlite3_int64 mid = (sqlite3_int64)((uint64_t)lo + ((uint64_t)hi - (uint64_t)lo) / 2);
        sqlite3_int64 at_mid;
        int r = probe(t, mid, &at_mid);

        if (r == 0) {
            lo = mid;
        } else {
            hi = mid;
            found = r;
            at = at_mid;
        }
    }
    if (found == 2) {
        note_range(t, next, 0, 1);
        return 0;
    }
    note_range(t, next, at - 1, 0);
    *resume = at;
    return 1;
}

/* The first rowid at or after next that reads, found through the rowids
 * index idx of the table lists: 1 with *resume set, 0 when none after next
 * reads (the rest of the table is lost), -1 when idx itself could not be
 * read to its end (another index, or the search, must say). */
static int skip_by_index(struct table_copy *t, const char *idx, sqlite3_int64 next,
                         sqlite3_int64 *resume)
{
    struct dynbuf sql;
    sqlite3_stmt *st = NULL;
    sqlite3_int64 at;
    int rc = -1, step = SQLITE_ERROR, r;

    dynbuf_init(&sql, SQL_CAP);
    (void)!dynbuf_printf(&sql, "SELECT rowid FROM \"%s\" INDEXED BY \"%s\" WHERE rowid >= ?1 "
                               "ORDER BY rowid",
                         t->table, idx);
    if (dynbuf_failed(&sql) || sqlite3_prepare_v2(t->src, sql.data, -1, &st, NULL) != SQLITE_OK ||
        sqlite3_bind_int64(st, 1, next) != SQLITE_OK)
        goto done;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        r = probe(t, sqlite3_column_int64(st, 0), &at);
        if (r == 1) {
            note_range(t, next, at - 1, 0);
            *resume = at;
            rc = 1;
            goto done;
        }
        if (r == 2)
            break; /* the index lists a row the table no longer has */
    }
    if (step == SQLITE_DONE || step == SQLITE_ROW) {
        note_range(t, next, 0, 1);
        rc = 0;
    }

done:
    sqlite3_finalize(st);
    dynbuf_free(&sql);
    return rc;
}

/* The first rowid at or after next (where a read failed) that reads:
 * through the table's whole indexes, one after another until one reads,
 * else by the search.  1 with *resume set, or 0 at the end of the table. */
static int skip_to_readable(struct table_copy *t, sqlite3_int64 next, sqlite3_int64 *resume)
{
    sqlite3_stmt *list = NULL;
    int rc = -1;

    if (sqlite3_prepare_v2(t->src, "SELECT name FROM pragma_index_list(?1) WHERE partial = 0",
                           -1, &list, NULL) == SQLITE_OK &&
        sqlite3_bind_text(list, 1, t->table, -1, SQLITE_STATIC) == SQLITE_OK)
        while (rc < 0 && sqlite3_step(list) == SQLITE_ROW)
            rc = skip_by_index(t, (const char *)sqlite3_column_text(list, 0), next, resume);
    sqlite3_finalize(list);
    return rc >= 0 ? rc : skip_damage(t, next, resume);
}

static int copy_rows(struct table_copy *t, char *err, size_t cap)
{
    sqlite3_int64 next = INT64_MIN;
    int rc;

    for (;;) {
        sqlite3_reset(t->read_from);
        if (t->rowid)
            sqlite3_bind_int64(t->read_from, 1, next);
        while ((rc = sqlite3_step(t->read_from)) == SQLITE_ROW) {
            if (copy_row(t, t->read_from) != 0) {
                snprintf(err, cap, "cannot write a row of %s: %s", t->table,
                         sqlite3_errmsg(t->dst));
                return -1;
            }
            if (t->rowid) {
                next = sqlite3_column_int64(t->read_from, 0);
                if (next == INT64_MAX)
                    return 0;
                next++;
            }
        }
        if (rc == SQLITE_DONE)
            return 0;
        if (!t->rowid) {
            /* No rowid to seek past the damage by: the rest is lost. */
            if (*t->ranges < RANGES_SHOWN)
                fprintf(t->out, "  %s: rows after the first %ld could not be read (%s)\n",
                        t->table, t->copied + t->refused, sqlite3_errmsg(t->src));
            (*t->ranges)++;
            return 0;
        }
        if (!skip_to_readable(t, next, &next))
            return 0;
    }
}

/* The columns of table that both files have (in src's order), quoted
 * and comma-separated, into cols; their number in *n. */
static int common_columns(sqlite3 *src, sqlite3 *dst, const char *table, struct dynbuf *cols,
                          int *n)
{
    sqlite3_stmt *theirs = NULL, *ours = NULL;
    int rc = -1, step;

    *n = 0;
    if (sqlite3_prepare_v2(src, "SELECT name FROM pragma_table_info(?1) ORDER BY cid", -1,
                           &theirs, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(dst, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2", -1, &ours,
                           NULL) != SQLITE_OK ||
        sqlite3_bind_text(theirs, 1, table, -1, SQLITE_STATIC) != SQLITE_OK ||
        sqlite3_bind_text(ours, 1, table, -1, SQLITE_STATIC) != SQLITE_OK)
        goto done;
    while ((step = sqlite3_step(theirs)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(theirs, 0);

        sqlite3_reset(ours);
        if (name == NULL || sqlite3_bind_text(ours, 2, name, -1, SQLITE_TRANSIENT) != SQLITE_OK)
            goto done;
        if (sqlite3_step(ours) != SQLITE_ROW)
            continue; /* a column the new file's schema does not have */
        if (dynbuf_printf(cols, "%s\"%s\"", *n ? ", " : "", name) != 0)
            goto done;
        (*n)++;
    }
    if (step == SQLITE_DONE)
        rc = 0;

done:
    sqlite3_finalize(ours);
    sqlite3_finalize(theirs);
    return rc;
}

/* Copies table from src into dst.  Its rows the damaged file counts
 * (through whatever index SQLite picks, which may be intact where the
 * table is not) go to *listed, -1 when that count fails. */
static int copy_table(sqlite3 *src, sqlite3 *dst, const char *table, FILE *out, int *ranges,
                      long *listed, char *err, size_t cap)
{
    struct table_copy t = {.src = src, .dst = dst, .table = table, .out = out, .ranges = ranges};
    struct dynbuf cols, sql;
    sqlite3_stmt *st = NULL;
    int rc = -1;

    dynbuf_init(&cols, SQL_CAP);
    dynbuf_init(&sql, SQL_CAP);
    *listed = -1;
    if (common_columns(src, dst, table, &cols, &t.ncols) != 0 || t.ncols == 0) {
        snprintf(err, cap, "cannot read the columns of %s: %s", table, sqlite3_errmsg(src));
        goto done;
    }
    t.rowid = dynbuf_printf(&sql, "SELECT rowid FROM \"%s\" LIMIT 0", table) == 0 &&
              sqlite3_prepare_v2(src, sql.data, -1, &st, NULL) == SQLITE_OK;
    sqlite3_finalize(st);
    st = NULL;
    dynbuf_reset(&sql);
    if (dynbuf_printf(&sql, "SELECT count(*) FROM \"%s\"", table) == 0 &&
        sqlite3_prepare_v2(src, sql.data, -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        *listed = (long)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);

    dynbuf_reset(&sql);
    if (t.rowid)
        (void)!dynbuf_printf(&sql, "SELECT rowid, %s FROM \"%s\" WHERE rowid >= ?1 ORDER BY rowid",
                             cols.data, table);
    else
        (void)!dynbuf_printf(&sql, "SELECT %s FROM \"%s\"", cols.data, table);
    if (dynbuf_failed(&sql) ||
        sqlite3_prepare_v2(src, sql.data, -1, &t.read_from, NULL) != SQLITE_OK)
        goto failed;
    if (t.rowid) {
        (void)!dynbuf_printf(&sql, " LIMIT 1");
        if (dynbuf_failed(&sql) ||
            sqlite3_prepare_v2(src, sql.data, -1, &t.read_one, NULL) != SQLITE_OK)
            goto failed;
    }
    dynbuf_reset(&sql);
    (void)!dynbuf_printf(&sql, "INSERT OR IGNORE INTO \"%s\" (%s%s) VALUES (", table,
                         t.rowid ? "rowid, " : "", cols.data);
    for (int i = 0; i < t.ncols + t.rowid; i++)
        (void)!dynbuf_printf(&sql, "%s?%d", i ? ", " : "", i + 1);
    (void)!dynbuf_printf(&sql, ")");
    if (dynbuf_failed(&sql) ||
        sqlite3_prepare_v2(dst, sql.data, -1, &t.insert, NULL) != SQLITE_OK) {
        snprintf(err, cap, "cannot write the table %s: %s", table, sqlite3_errmsg(dst));
        goto done;
    }
    if (copy_rows(&t, err, cap) != 0)
        goto done;
    if (t.refused > 0)
        fprintf(out, "  %s: %ld rows read were refused by the schema (damaged values)\n", table,
                t.refused);
    rc = 0;
    goto done;

failed:
    snprintf(err, cap, "cannot read the table %s: %s", table, sqlite3_errmsg(src));
done:
    sqlite3_finalize(t.insert);
    sqlite3_finalize(t.read_one);
    sqlite3_finalize(t.read_from);
    dynbuf_free(&sql);
    dynbuf_free(&cols);
    return rc;
}

/* Rows whose JSON no longer is JSON are dropped (store_json_damage.h): a
 * run read whole but damaged is lost like one on a damaged page.  A done
 * run whose results were lost is dropped (it would be served as done with
 * nothing in it), and so are rows that name a run (a run_id column) that
 * was not recovered: results, digests, verdicts and alerts of a lost run
 * would otherwise point at nothing (the foreign keys were off while
 * copying).  What was dropped for damage is said on out. */
static int drop_orphans(sqlite3 *db, FILE *out, char *err, size_t cap)
{
    sqlite3_stmt *st = NULL;
    char sql[256];
    int rc = -1, step;

    if (store_json_damage_drop(db, out) < 0 ||
        sqlite3_exec(db,
                     "DELETE FROM runs WHERE status = 'done' "
                     "AND id NOT IN (SELECT run_id FROM run_results)",
                     NULL, NULL, NULL) != SQLITE_OK)
        goto done;
    if (sqlite3_prepare_v2(db,
                           "SELECT m.name FROM sqlite_schema m "
                           "WHERE m.type = 'table' AND m.name <> 'runs' AND EXISTS "
                           "(SELECT 1 FROM pragma_table_info(m.name) WHERE name = 'run_id')",
                           -1, &st, NULL) != SQLITE_OK)
        goto done;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        snprintf(sql, sizeof(sql),
                 "DELETE FROM \"%s\" WHERE run_id NOT IN (SELECT id FROM runs)",
                 (const char *)sqlite3_column_text(st, 0));
        if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
            goto done;
    }
    if (step == SQLITE_DONE)
        rc = 0;

done:
    if (rc != 0)
        snprintf(err, cap, "cannot drop the rows of lost runs: %s", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return rc;
}

/* Every table of the new file dst (at the damaged file's version) that
 * the damaged file src has too, copied; then the lost runs' rows dropped. */
static int copy_tables(sqlite3 *src, sqlite3 *dst, FILE *out, struct store_copy_report *report,
                       char *err, size_t cap)
{
    sqlite3_stmt *ours = NULL, *theirs = NULL;
    long listed_runs = -1, kept_runs = -1;
    int rc = -1, step;

    if (sqlite3_prepare_v2(dst,
                           "SELECT name FROM sqlite_schema WHERE type = 'table' "
                           "AND name NOT LIKE 'sqlite_%' ORDER BY rowid",
                           -1, &ours, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(src, "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?1",
                           -1, &theirs, NULL) != SQLITE_OK) {
        snprintf(err, cap, "cannot read the list of tables: %s", sqlite3_errmsg(src));
        goto done;
    }
    while ((step = sqlite3_step(ours)) == SQLITE_ROW) {
        const char *table = (const char *)sqlite3_column_text(ours, 0);
        long listed;

        sqlite3_reset(theirs);
        if (sqlite3_bind_text(theirs, 1, table, -1, SQLITE_TRANSIENT) != SQLITE_OK ||
            sqlite3_step(theirs) != SQLITE_ROW)
            continue; /* not in the damaged file's schema */
        if (copy_table(src, dst, table, out, &report->damaged_ranges, &listed, err, cap) != 0)
            goto done;
        if (strcmp(table, "runs") == 0)
            listed_runs = listed;
    }
    if (step != SQLITE_DONE) {
        snprintf(err, cap, "cannot read the list of tables: %s", sqlite3_errmsg(dst));
        goto done;
    }
    if (drop_orphans(dst, out, err, cap) != 0)
        goto done;
    if (one_int(dst, "SELECT count(*) FROM runs", &kept_runs) != 0) {
        snprintf(err, cap, "cannot count the runs recovered: %s", sqlite3_errmsg(dst));
        goto done;
    }
    report->unread_rows = listed_runs >= kept_runs ? listed_runs - kept_runs : -1;
    rc = 0;

done:
    sqlite3_finalize(theirs);
    sqlite3_finalize(ours);
    return rc;
}

int store_recover_file(const char *src_path, const char *dest, FILE *out,
                       struct store_copy_report *report, char *err, size_t cap)
{
    sqlite3 *src = NULL, *dst = NULL;
    char tmp[4096];
    long version = -1;
    int rc = STORE_ERROR, made_tmp = 0;

    memset(report, 0, sizeof(*report));
    report->unread_rows = -1;
    err[0] = '\0';
    if (dest_free(dest, err, cap) != 0)
        return STORE_ERROR;
    if (temp_name(dest, tmp, sizeof(tmp)) != 0) {
        snprintf(err, cap, "%s: path too long", dest);
        return STORE_ERROR;
    }
    /* Two connections: a read that meets damage fails its statement, and
     * on the connection writing the new file it would also spoil the open
     * write transaction. */
    if (sqlite3_open_v2(src_path, &src, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
        one_int(src, "PRAGMA user_version", &version) != 0) {
        snprintf(err, cap, "cannot read %s at all: %s (its first page, which holds the "
                           "schema, is damaged, or it is not a database)",
                 src_path, src ? sqlite3_errmsg(src) : "out of memory");
        goto done;
    }
    if (has_runs_table(src, "main") != 1 || version <= 0) {
        snprintf(err, cap, "%s is not a gpubench database (no runs table, schema version %ld)",
                 src_path, version);
        goto done;
    }
    if (version > migration_count) {
        snprintf(err, cap, "%s is at schema version %ld, newer than this gpubench knows (%d): "
                           "recover it with the gpubench that wrote it",
                 src_path, version, migration_count);
        goto done;
    }
    made_tmp = 1;
    unlink(tmp); /* one this process id left once, killed mid-copy */
    if (sqlite3_open_v2(tmp, &dst, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
        SQLITE_OK) {
        snprintf(err, cap, "cannot create %s: %s", tmp,
                 dst ? sqlite3_errmsg(dst) : "out of memory");
        goto done;
    }
    /* A scratch file until it is checked and linked: no journal needed. */
    if (sqlite3_exec(dst, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF", NULL, NULL,
                     NULL) != SQLITE_OK ||
        migrate_apply_upto(dst, (int)version, err, cap) != 0)
        goto done;
    fprintf(out, "recovering %s (schema version %ld) into %s\n", src_path, version, dest);
    if (sqlite3_exec(dst, "BEGIN", NULL, NULL, NULL) != SQLITE_OK ||
        copy_tables(src, dst, out, report, err, cap) != 0 ||
        sqlite3_exec(dst, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        if (err[0] == '\0')
            snprintf(err, cap, "cannot write %s: %s", tmp, sqlite3_errmsg(dst));
        goto done;
    }
    if (migrate_apply(dst, err, cap) != 0)
        goto done;
    sqlite3_close(dst);
    dst = NULL;
    if (finish_copy(tmp, dest, report, err, cap) != STORE_OK)
        goto done;
    fprintf(out, "recovered %ld runs into %s (schema version %d, integrity ok)", report->runs,
            dest, report->schema_version);
    if (report->unread_rows > 0)
        fprintf(out, "; %ld runs the damaged file lists could not be read", report->unread_rows);
    else if (report->unread_rows < 0)
        fprintf(out, "; the damaged file's own count of runs could not be read");
    if (report->damaged_ranges > 0)
        fprintf(out, "; %d damaged stretches skipped", report->damaged_ranges);
    fprintf(out, "\n");
    rc = STORE_OK;

done:
    sqlite3_close(dst);
    sqlite3_close(src);
    if (made_tmp)
        unlink(tmp);
    return rc;
}
