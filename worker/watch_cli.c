/*
 * watch_cli.c - see watch_cli.h.  CUDA is used only to map --device N to
 * its PCI bus id (the id NVML takes); --pci-bus-id skips it, so a build
 * without CUDA reads a card too (and the tests read the stand-in NVML that
 * way).  The readings are those the daemon's probe gets, taken every
 * --interval seconds for --seconds: NVML's XID events between two of them
 * are in the later one.
 */
#include "watch_cli.h"

#include "gb_kernels.h"
#include "nvml_state.h"
#include "nvml_watch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WATCH_SECONDS_DEFAULT 120
#define WATCH_SECONDS_MAX 86400

static int usage(void)
{
    fprintf(stderr, "usage: gpubench-worker watch (--device N | --pci-bus-id ID) "
                    "[--seconds S] [--interval S]\n"
                    "  one NVML watch reading of the card a line (JSON), every --interval\n"
                    "  seconds (1) for --seconds (120)\n");
    return 2;
}

/* argv[i] as a whole number from min to max into *out; -1 when it is not. */
static int whole(const char *text, long min, long max, long *out)
{
    char *end;

    *out = strtol(text, &end, 10);
    return end != text && *end == '\0' && *out >= min && *out <= max ? 0 : -1;
}

static void sleep_s(long s)
{
    struct timespec ts = {s, 0};

    while (nanosleep(&ts, &ts) != 0)
        ;
}

int gb_watch_cli(int argc, char **argv)
{
    long device = -1, seconds = WATCH_SECONDS_DEFAULT, interval = 1;
    const char *bus = NULL;
    struct gb_device_info info;
    struct gb_cuda_error cerr;
    struct gb_nvml *nvml = NULL;
    char reason[256] = "";
    int rc = 1;

    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (v == NULL)
            return usage();
        if (strcmp(argv[i], "--device") == 0 && whole(v, 0, 1024, &device) == 0)
            i++;
        else if (strcmp(argv[i], "--pci-bus-id") == 0 && strlen(v) < sizeof(info.pci_bus_id))
            bus = argv[++i];
        else if (strcmp(argv[i], "--seconds") == 0 && whole(v, 1, WATCH_SECONDS_MAX, &seconds) == 0)
            i++;
        else if (strcmp(argv[i], "--interval") == 0 && whole(v, 1, 3600, &interval) == 0)
            i++;
        else
            return usage();
    }
    if ((device < 0) == (bus == NULL))
        return usage();
    if (bus == NULL) {
        memset(&cerr, 0, sizeof(cerr));
        if (gb_device_query((int)device, &info, &cerr) != 0) {
            fprintf(stderr, "gpubench-worker watch: GPU %ld: %s; give --pci-bus-id instead\n",
                    device, cerr.text[0] ? cerr.text : cerr.name);
            return 1;
        }
        bus = info.pci_bus_id;
    }
    if ((nvml = gb_nvml_open(reason, sizeof(reason))) == NULL) {
        fprintf(stderr, "gpubench-worker watch: NVML: %s\n", reason);
        return 1;
    }
    for (long taken = 0; taken * interval < seconds; taken++) {
        cJSON *r = gb_nvml_watch_reading(nvml, bus, reason);
        char *text = r ? cJSON_PrintUnformatted(r) : NULL;
        cJSON_Delete(r);
        if (text == NULL) {
            fprintf(stderr, "gpubench-worker watch: out of memory\n");
            goto done;
        }
        printf("%s\n", text);
        cJSON_free(text);
        if (fflush(stdout) != 0)
            goto done; /* the reader went away */
        if ((taken + 1) * interval < seconds)
            sleep_s(interval);
    }
    rc = 0;

done:
    gb_nvml_close(nvml);
    return rc;
}
