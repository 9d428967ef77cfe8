/*
 * cmd_import.c - `gpubench import FILE`: the file's bytes as they are
 * (NDJSON, one finished run a line) to POST /runs/import, which checks it
 * whole and stores all of it or none.  Read into a buffer capped at the
 * daemon's own import cap, so a file it would refuse is refused here
 * without sending it.  It says how many runs were new and how many the
 * daemon already had (the answer's imported and already_here).
 */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define IMPORT_CAP (64 * 1024 * 1024) /* HTTP_IMPORT_BODY_CAP of the daemon */

int cmd_import(struct cli *c)
{
    struct gb_response res = {0};
    struct dynbuf body;
    char chunk[65536], err[512];
    FILE *f = NULL;
    cJSON *doc = NULL;
    int rc = CLI_ERROR;
    size_t n;

    dynbuf_init(&body, IMPORT_CAP);
    dynbuf_init(&res.body, 1);
    if (c->nargs != 1) {
        fprintf(stderr, "gpubench import: expected one FILE (- for stdin)\n");
        goto done;
    }
    f = strcmp(c->args[0], "-") == 0 ? stdin : fopen(c->args[0], "rb");
    if (f == NULL) {
        fprintf(stderr, "gpubench import: %s: %s\n", c->args[0], strerror(errno));
        goto done;
    }
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        if (dynbuf_add(&body, chunk, n) != 0) {
            fprintf(stderr, "gpubench import: %s: over the daemon's %d MiB import limit\n",
                    c->args[0], IMPORT_CAP / (1024 * 1024));
            goto done;
        }
    if (ferror(f)) {
        fprintf(stderr, "gpubench import: %s: %s\n", c->args[0], strerror(errno));
        goto done;
    }
    gb_response_free(&res);
    if (gb_http_request(c->http, "POST", "/runs/import", body.data ? body.data : "", body.len,
                        "application/x-ndjson", &res, err, sizeof(err)) != 0) {
        fprintf(stderr, "gpubench: %s\n", err);
        goto done;
    }
    if (res.status >= 400) {
        cli_report_error(c, &res);
        goto done;
    }
    if (c->opt.json) {
        printf("%s\n", res.body.data ? res.body.data : "");
    } else if ((doc = cJSON_Parse(res.body.data ? res.body.data : "")) != NULL) {
        const cJSON *imported = cJSON_GetObjectItem(doc, "imported");
        const cJSON *already = cJSON_GetObjectItem(doc, "already_here");
        int n = cJSON_IsNumber(imported) ? imported->valueint : 0;
        printf("imported %d run%s", n, n == 1 ? "" : "s");
        if (cJSON_IsNumber(already))
            printf("; %d %s already here", already->valueint,
                   already->valueint == 1 ? "was" : "were");
        printf("\n");
    } else {
        printf("%s\n", res.body.data ? res.body.data : "");
    }
    rc = CLI_OK;
done:
    if (f && f != stdin)
        fclose(f);
    cJSON_Delete(doc);
    gb_response_free(&res);
    dynbuf_free(&body);
    return rc;
}
