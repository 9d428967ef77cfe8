/*
 * run_cli.h - `gpubench-worker run NAME [PARAMS-JSON] [--device N] [--json]`:
 * one benchmark through the same code path as the daemon, with a table
 * for people (or the result and meta as JSON with --json).
 */
#ifndef GPUBENCH_WORKER_RUN_CLI_H
#define GPUBENCH_WORKER_RUN_CLI_H

/* argv[0] is "run".  Returns the exit status: 0 done, 1 the device or the
 * run failed, 2 bad usage or parameters, 3 the GPU context was lost. */
int gb_run_cli(int argc, char **argv);

#endif
