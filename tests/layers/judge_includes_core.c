/*
 * judge_includes_core.c - the control for core_includes_store.c: a file
 * built as server/judge is that includes a header of core, below it.  It
 * must build, so that the refusal of the other is the layers' doing and
 * not a broken probe.
 */
#include "log.h"

void layer_probe_downward(void)
{
    log_info("a layer may use the layers below it");
}
