#!/usr/bin/env python3
"""bench/store/replicate.py BASE-DB OUT-DB COPIES: a store of COPIES times
BASE-DB's runs, each copy on cards of its own (host "cNNN-" + host, the
card's UUID + "-NNN"), its runs' ids the base's with their UUIDv7 time kept
and the rest made unique (and final_seq moved past the others), made by
SQL from the base's rows: runs, run_results (samples and all), run_digests,
run_verdicts.  The base comes from gpubench-make-db (the real import path;
GB_BENCH_HOSTS=2 makes 8 cards); copying its rows is minutes where making a
million runs through the import path is an hour on a loaded 2-vCPU box.
The change series are not copied: bench/store/replay_time.py builds them,
as an upgraded store's first start does.  Synthetic filler, not results."""
import shutil
import sqlite3
import sys
import time

base, out, copies = sys.argv[1], sys.argv[2], int(sys.argv[3])
shutil.copyfile(base, out)
con = sqlite3.connect(out, isolation_level=None)
con.execute("PRAGMA journal_mode = WAL")
con.execute("PRAGMA synchronous = OFF")
n = con.execute("SELECT max(rowid) FROM runs").fetchone()[0]
seq = con.execute("SELECT coalesce(max(final_seq), 0) FROM runs").fetchone()[0]
cols = [r[1] for r in con.execute("PRAGMA table_info(runs)")]
new_id = "substr(id, 1, 24) || printf('%012x', ?1 * 65536 + rowid)"
repl = {
    "id": new_id,
    "host": "printf('c%03d-', ?1) || host",
    "device_uuid": "device_uuid || printf('-%03d', ?1)",
    "final_seq": "final_seq + ?1 * ?2",
}
runs_sql = "INSERT INTO runs (%s) SELECT %s FROM runs WHERE rowid <= ?3" % (
    ", ".join(cols), ", ".join(repl.get(c, c) for c in cols))
t0 = time.time()
for k in range(1, copies):
    con.execute("BEGIN")
    con.execute(runs_sql, (k, seq, n))
    for table, rest in (("run_results", "results, meta, samples_dropped"),
                        ("run_digests", "summary, rows"), ("run_verdicts", "verdicts")):
        con.execute("INSERT INTO %s (run_id, %s) SELECT substr(t.run_id, 1, 24) || "
                    "printf('%%012x', ?1 * 65536 + r.rowid), %s FROM %s t "
                    "JOIN runs r ON r.id = t.run_id WHERE r.rowid <= ?2"
                    % (table, rest, ", ".join("t." + c.strip() for c in rest.split(",")), table),
                    (k, n))
    con.execute("COMMIT")
    if k % 10 == 0:
        print("%d of %d copies (%.0f s)" % (k + 1, copies, time.time() - t0), flush=True)
con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
print("%d runs, %d cards in %.0f s" % (
    con.execute("SELECT count(*) FROM runs").fetchone()[0],
    con.execute("SELECT count(DISTINCT device_uuid) FROM runs").fetchone()[0], time.time() - t0))
