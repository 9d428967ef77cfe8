#!/usr/bin/env python3
"""bench/peers/apply.py - how long a hub takes to apply a large peers file
(issue 35, point 9: 200,000 targets took 33 s and 450 MB).

Starts one hub (no GPU) with a peers file of one target, then writes files
of N targets (loopback addresses where nothing listens, so every pull fails
at once and backs off: the puller is busy as a hub with dead nodes is) and
SIGHUPs it, three times:

  add     N new targets
  relabel the same N targets with other labels (nothing added or removed)
  remove  half of them gone

For each: the time the daemon's own log gives ("applied in X ms", the
puller thread's time for the read and the apply), and the time from the
SIGHUP until GET /peers counts them (which adds the polling).  Then the
hub's resident memory (VmRSS).  Prints a table.

    python3 bench/peers/apply.py --build build --targets 10000
"""
import argparse
import json
import os
import re
import signal
import sys
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TOP, "tests", "api"))
APPLIED = re.compile(r"--peers-file \S+: (\d+) target\(s\); (\d+) peer\(s\) in all "
                     r"\(applied in (\d+) ms\)")


def write(path, urls, label):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump([{"targets": urls, "labels": {"rack": label}}], f)
    os.replace(tmp, path)


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--targets", type=int, default=10000)
    args = ap.parse_args()
    os.environ.setdefault("GPUBENCH_DAEMON", os.path.join(args.build, "bin", "gpubenchd"))
    os.environ.setdefault("GPUBENCH_FAKE_WORKER",
                          os.path.join(args.build, "tests", "gpubench-fake-worker"))
    from harness import Daemon

    n = args.targets
    # 127.1.x.y:9: loopback, nothing listening (a refused connection at once)
    urls = ["http://127.1.%d.%d:9" % (i // 250, i % 250 + 1) for i in range(n)]
    hub = Daemon(gpus=0, args=["--peer-interval", "30"])
    path = os.path.join(hub.tmp, "peers.json")
    write(path, urls[:1], "a")
    hub.args += ["--peers-file", path]
    hub.start()
    rows = []
    try:
        for name, targets, label in (("add", urls, "a"), ("relabel", urls, "b"),
                                     ("remove half", urls[: n // 2], "b")):
            seen = len(APPLIED.findall(hub.read_log()))
            write(path, targets, label)
            t0 = time.time()
            hub.proc.send_signal(signal.SIGHUP)
            while True:
                got = APPLIED.findall(hub.read_log())
                if len(got) > seen:
                    break
                time.sleep(0.01)
            logged_ms = int(got[-1][2])
            while hub.get("/peers?label=rack:none").json()["total"] != len(targets):
                time.sleep(0.01)
            rows.append((name, len(targets), logged_ms, (time.time() - t0) * 1000,
                         rss_kb(hub.proc.pid) / 1024))
    finally:
        hub.stop()
    print("| step | targets | applied (daemon's log) ms | SIGHUP to GET /peers ms | VmRSS MB |")
    print("|---|---|---|---|---|")
    for r in rows:
        print("| %s | %d | %d | %.0f | %.1f |" % r)


if __name__ == "__main__":
    main()
