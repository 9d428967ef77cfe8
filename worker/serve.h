/*
 * serve.h - `gpubench-worker --serve --device N`: the NDJSON protocol the
 * daemon speaks to its worker: one ready line, then for each job line
 * {"id","benchmark","params"} progress lines and one result or error (the
 * README's "How it is built").  Between jobs the daemon may send the watch
 * probe {"watch":true}; the answer is {"event":"watch","reading":{...}}
 * (kernels/nvml_watch.h).
 */
#ifndef GPUBENCH_WORKER_SERVE_H
#define GPUBENCH_WORKER_SERVE_H

#include <stdio.h>

/* Serves jobs from in, answering on out, until end of input.  Returns the
 * process exit status: 0 at end of input; 1 when the device cannot be
 * opened (an error event without id is printed first); 3 after a CUDA
 * error that left the context unusable (reported on its job first). */
int gb_serve(int device, FILE *in, FILE *out);

#endif
