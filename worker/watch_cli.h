/*
 * watch_cli.h - `gpubench-worker watch (--device N | --pci-bus-id ID)
 * [--seconds S] [--interval S]`: the daemon's watch readings of one card
 * (kernels/nvml_watch.c), one JSON object a line on stdout, in the format
 * the stand-in NVML replays (tests/fake_nvml.c), so that a recording made
 * on a card becomes tests/fixtures/h200_watch_readings.ndjson.
 */
#ifndef GPUBENCH_WORKER_WATCH_CLI_H
#define GPUBENCH_WORKER_WATCH_CLI_H

/* argv[0] is "watch".  Returns the exit status: 0 done, 1 the card or NVML
 * could not be read, 2 bad usage. */
int gb_watch_cli(int argc, char **argv);

#endif
