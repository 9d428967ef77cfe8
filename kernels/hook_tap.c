/*
 * hook_tap.c - the job's hooks first, then the tap's; see hook_tap.h.
 */
#include "hook_tap.h"

static void tap_progress(void *arg, int done, int total)
{
    struct gb_hook_tap *t = arg;

    if (t->inner->progress)
        t->inner->progress(t->inner->arg, done, total);
}

static void tap_in_flight(void *arg, int done, int total)
{
    struct gb_hook_tap *t = arg;

    if (t->inner->in_flight)
        t->inner->in_flight(t->inner->arg, done, total);
    if (t->in_flight)
        t->in_flight(t->arg);
}

static void tap_between(void *arg, struct gb_samples *row)
{
    struct gb_hook_tap *t = arg;

    if (t->inner->between)
        t->inner->between(t->inner->arg, row);
    if (t->between)
        t->between(t->arg, row);
}

void gb_hook_tap_init(struct gb_hook_tap *tap, struct gb_hooks *inner,
                      void (*in_flight)(void *arg),
                      void (*between)(void *arg, struct gb_samples *row), void *arg)
{
    tap->inner = inner;
    tap->in_flight = in_flight;
    tap->between = between;
    tap->arg = arg;
    tap->hooks = (struct gb_hooks){tap_progress, tap_in_flight, tap_between, tap,
                                   inner->done, inner->total};
}

void gb_hook_tap_finish(struct gb_hook_tap *tap)
{
    tap->inner->done = tap->hooks.done;
    tap->inner->total = tap->hooks.total;
}
