#!/bin/sh
# h200_clock_check.sh WORKER GLOBALTIMER JUDGE [LIBDIR] - the device check
# of the SM clock measured on the SM (issue 13 follow-up), on an idle card:
#  (a) how finely %globaltimer ticks and whether it keeps the host's time
#      (gpubench-globaltimer, twice);
#  (b) smem_stride 1..65 and [1, 32], twice each: per row the clock,
#      ratio_cycles, the time ratio, and the daemon's verdict
#      (gpubench-judge: common/validity.c).  Every run must be valid and
#      every ratio_cycles within 1% of gcd(stride, 32).
# Everything lands in $OUT/clock.tar (tee stdout for the log).  It changes
# no setting of the card.
set -u
W=$1 G=$2 J=$3 LIBS=${4:-}
R=$(mktemp -d)

nvidia-smi --query-gpu=name,driver_version,pci.bus_id,clocks.sm,clocks.mem,temperature.gpu,power.draw,utilization.gpu --format=csv
for i in 1 2; do
    env LD_LIBRARY_PATH="$LIBS" "$G" >"$R/globaltimer_$i.json"
    echo "globaltimer $i: exit $? $(cat "$R/globaltimer_$i.json")"
done
for i in a b; do
    for run in "strides:{\"strides\":[1,2,4,8,16,32,33,64,65]}" "1_32:{\"strides\":[1,32]}"; do
        name=h200_validity_${run%%:*}_$i
        env LD_LIBRARY_PATH="$LIBS" "$W" run smem_stride "${run#*:}" --json \
            >"$R/$name.json" 2>"$R/$name.err"
        echo "$name: exit $?"
    done
done
for f in "$R"/h200_validity_*.json; do
    env LD_LIBRARY_PATH="$LIBS" "$J" "$f"
    echo "judge: exit $?"
done
python3 - "$R" <<'PY'
import json, math, sys, glob, os
bad = 0
for f in sorted(glob.glob(os.path.join(sys.argv[1], "h200_validity_*.json"))):
    d = json.load(open(f))
    s = d["result"]["summary"]
    print(os.path.basename(f), "max_ratio_error (cycles) %.5f time %.5f" % (
        s["max_ratio_error"], s["max_ratio_error_time"]), "clock_source:", s["peak"]["clock_source"])
    for r in d["result"]["rows"]:
        g = math.gcd(int(r["stride"]), 32)
        off = r["ratio_cycles"] / g - 1
        bad += abs(off) > 0.01
        print("  stride %3d median %.4f ms clock %.1f MHz ratio %.4f ratio_cycles %.4f (%+.3f%%) spread %.4f" % (
            r["stride"], r["median_ms"], r["sm_clock_mhz_measured"], r["ratio"],
            r["ratio_cycles"], 100 * off, r["spread"]))
print("rows off gcd by more than 1%:", bad)
PY

tar -C "$R" -cf "$OUT/clock.tar" .
