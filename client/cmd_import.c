/*
 * cmd_import.c - `gpubench import FILE`: finished runs (NDJSON, one a
 * line) to POST /runs/import, which checks what it gets whole and stores
 * all of it or none.  The lines go as they are, in pages under the
 * daemon's own import cap (HTTP_IMPORT_BODY_CAP, 64 MiB): a file larger
 * than one body (a whole export of a busy node, about 5,800 runs) is sent
 * page after page by itself, each page all or nothing, so a refused page
 * leaves the pages before it stored (importing again skips them).  A
 * single line over the cap is refused here without sending it.  It says
 * how many runs were new and how many the daemon already had (the
 * answers' imported, already_here and conflicts, summed over the pages).
 *
 * The pager (struct cli_import, cli.h) is also what `gpubench demo`
 * (cmd_demo.c) sends its runs through.
 */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#define IMPORT_CAP ((size_t)64 * 1024 * 1024) /* HTTP_IMPORT_BODY_CAP of the daemon */

void cli_import_init(struct cli_import *im, struct cli *c, const char *what)
{
    memset(im, 0, sizeof(*im));
    im->c = c;
    im->what = what;
    dynbuf_init(&im->page, IMPORT_CAP);
}

void cli_import_free(struct cli_import *im)
{
    dynbuf_free(&im->page);
}

/* POSTs the page held; CLI_OK or CLI_ERROR said. */
static int send_page(struct cli_import *im)
{
    struct gb_response res = {0};
    cJSON *doc = NULL;
    char err[512];
    int rc = CLI_ERROR;

    dynbuf_init(&res.body, 1);
    if (im->page.len == 0)
        return CLI_OK;
    if (gb_http_request(im->c->http, "POST", "/runs/import", im->page.data, im->page.len,
                        "application/x-ndjson", &res, err, sizeof(err)) != 0) {
        fprintf(stderr, "gpubench: %s\n", err);
        goto done;
    }
    if (res.status >= 400) {
        if (im->pages > 0 || im->line > im->page_lines)
            fprintf(stderr,
                    "gpubench import: %s: the page of lines %ld-%ld was refused (line numbers "
                    "below count from %ld); the %d page%s before it %s stored\n",
                    im->what, im->line - im->page_lines + 1, im->line,
                    im->line - im->page_lines + 1, im->pages, im->pages == 1 ? "" : "s",
                    im->pages == 1 ? "was" : "were");
        cli_report_error(im->c, &res);
        goto done;
    }
    doc = cJSON_Parse(res.body.data ? res.body.data : "");
    if (doc == NULL) {
        fprintf(stderr, "gpubench import: the daemon's answer is not JSON\n");
        goto done;
    }
    {
        const cJSON *imported = cJSON_GetObjectItem(doc, "imported");
        const cJSON *already = cJSON_GetObjectItem(doc, "already_here");
        const cJSON *conflicts = cJSON_GetObjectItem(doc, "conflicts");
        im->imported += cJSON_IsNumber(imported) ? (long)imported->valuedouble : 0;
        im->already += cJSON_IsNumber(already) ? (long)already->valuedouble : 0;
        im->conflicts += cJSON_IsNumber(conflicts) ? (long)conflicts->valuedouble : 0;
    }
    im->pages++;
    im->page_lines = 0;
    dynbuf_reset(&im->page);
    rc = CLI_OK;
done:
    cJSON_Delete(doc);
    gb_response_free(&res);
    return rc;
}

int cli_import_line(struct cli_import *im, const char *line, size_t len)
{
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
        len--;
    im->line++;
    if (len == 0)
        return CLI_OK;
    if (len + 1 > IMPORT_CAP) {
        fprintf(stderr, "gpubench import: %s: line %ld is %zu bytes, over the daemon's %zu MiB "
                        "import limit\n",
                im->what, im->line, len, IMPORT_CAP / (1024 * 1024));
        return CLI_ERROR;
    }
    if (im->page.len + len + 1 > IMPORT_CAP) {
        im->line--; /* the page sent ends at the line before */
        if (send_page(im) != CLI_OK)
            return CLI_ERROR;
        im->line++;
    }
    if (dynbuf_add(&im->page, line, len) != 0 || dynbuf_add(&im->page, "\n", 1) != 0) {
        fprintf(stderr, "gpubench import: out of memory\n");
        return CLI_ERROR;
    }
    im->page_lines++;
    return CLI_OK;
}

int cli_import_finish(struct cli_import *im)
{
    return send_page(im);
}

int cmd_import(struct cli *c)
{
    struct cli_import im;
    FILE *f = NULL;
    char *line = NULL;
    size_t alloc = 0;
    ssize_t n;
    int rc = CLI_ERROR;

    cli_import_init(&im, c, c->nargs == 1 ? c->args[0] : "");
    if (c->nargs != 1) {
        fprintf(stderr, "gpubench import: expected one FILE (- for stdin)\n");
        goto done;
    }
    f = strcmp(c->args[0], "-") == 0 ? stdin : fopen(c->args[0], "rb");
    if (f == NULL) {
        fprintf(stderr, "gpubench import: %s: %s\n", c->args[0], strerror(errno));
        goto done;
    }
    while ((n = getline(&line, &alloc, f)) >= 0)
        if (cli_import_line(&im, line, (size_t)n) != CLI_OK)
            goto done;
    if (ferror(f)) {
        fprintf(stderr, "gpubench import: %s: %s\n", c->args[0], strerror(errno));
        goto done;
    }
    if (cli_import_finish(&im) != CLI_OK)
        goto done;
    cli_import_say(&im);
    rc = CLI_OK;
done:
    if (f && f != stdin)
        fclose(f);
    free(line);
    cli_import_free(&im);
    return rc;
}

void cli_import_say(const struct cli_import *im)
{
    if (im->c->opt.json) {
        printf("{\"imported\":%ld,\"already_here\":%ld,\"conflicts\":%ld", im->imported,
               im->already, im->conflicts);
        if (im->pages > 1)
            printf(",\"pages\":%d", im->pages);
        printf("}\n");
        return;
    }
    printf("imported %ld run%s; %ld %s already here", im->imported, im->imported == 1 ? "" : "s",
           im->already, im->already == 1 ? "was" : "were");
    if (im->conflicts > 0)
        printf(" (%ld of them held here with another origin: left as they are)", im->conflicts);
    if (im->pages > 1)
        printf(" (sent in %d pages under the daemon's %zu MiB limit)", im->pages,
               IMPORT_CAP / (1024 * 1024));
    printf("\n");
}
