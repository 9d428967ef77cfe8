#!/usr/bin/env python3
"""bench/store/replay_time.py BUILD DB: every change-point series of a
store built from scratch, as the first start after migration 0022 does
(server/runs/change_replay.c): the replay's cursor put back, change_series
and changes emptied, then gpubenchd started on DB until its log says the
replay is done; prints the runs replayed, the wall time the daemon logs and
its CPU time (utime + stime from /proc, the box's other load not counted),
the series and their state's bytes.  DB is changed (the series rebuilt as
they were); a copy is not made (a million runs is ~12 GB)."""
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time

build, db = sys.argv[1], sys.argv[2]
con = sqlite3.connect(db)
con.executescript("INSERT OR REPLACE INTO change_replay (only, after_id) VALUES (1, ''); "
                  "DELETE FROM change_series; DELETE FROM changes;")
con.close()
log_path = db + ".replay.log"
tick = os.sysconf("SC_CLK_TCK")
with open(log_path, "wb") as log:
    p = subprocess.Popen([os.path.join(build, "bin", "gpubenchd"), "--listen", "127.0.0.1:0",
                          "--db", db, "--keep-samples", "0", "--db-check-delay", "86400"],
                         stdout=log, stderr=subprocess.STDOUT)
cpu = None
done = None
while p.poll() is None:
    text = open(log_path).read()
    done = re.search(r"change series: (\d+) run\(s\) replayed: done, ([0-9.]+) s", text)
    if done:
        with open("/proc/%d/stat" % p.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        cpu = (int(fields[11]) + int(fields[12])) / tick
        break
    time.sleep(0.5)
p.send_signal(signal.SIGTERM)
p.wait(timeout=120)
if not done:
    sys.exit("no replay finished; see " + log_path)
con = sqlite3.connect(db)
n, size = con.execute("SELECT count(*), sum(length(state)) FROM change_series").fetchone()
kinds = con.execute("SELECT kind, count(*) FROM changes GROUP BY kind").fetchall()
con.close()
runs, wall = int(done.group(1)), float(done.group(2))
print("replayed %d runs in %.1f s (daemon's CPU %.1f s, %.0f us a run): %d series, "
      "%.1f MB of state; changes found %s" % (runs, wall, cpu, 1e6 * cpu / max(runs, 1), n,
                                             (size or 0) / 1e6, dict(kinds)))
