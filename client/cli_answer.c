/*
 * cli_answer.c - the daemon's answers as the subcommands use them: JSON
 * parsed, and an error answer passed on as the daemon said it (its
 * error.message and error.code, with the HTTP status) rather than
 * reworded, so what a user reads matches the API's documentation.
 */
#include "cli.h"

#include <stdio.h>
#include <string.h>

int cli_report_error(struct cli *c, const struct gb_response *res)
{
    cJSON *doc = cJSON_Parse(res->body.data ? res->body.data : "");
    const cJSON *e = cJSON_GetObjectItem(doc, "error");
    const char *msg = cJSON_GetStringValue(cJSON_GetObjectItem(e, "message"));
    const char *code = cJSON_GetStringValue(cJSON_GetObjectItem(e, "code"));

    if (c->opt.json && res->body.len)
        printf("%s%s", res->body.data, res->body.data[res->body.len - 1] == '\n' ? "" : "\n");
    if (msg && code)
        fprintf(stderr, "gpubench: %s (%s, HTTP %ld)\n", msg, code, res->status);
    else
        fprintf(stderr, "gpubench: HTTP %ld from the daemon: %.200s\n", res->status,
                res->body.data ? res->body.data : "");
    cJSON_Delete(doc);
    return CLI_ERROR;
}

int cli_request_json(struct cli *c, const char *method, const char *path, const char *body,
                     size_t len, int echo, cJSON **out)
{
    struct gb_response res;
    char err[512];
    int rc = CLI_ERROR;

    *out = NULL;
    if (gb_http_request(c->http, method, path, body, len, body ? "application/json" : NULL, &res,
                        err, sizeof(err)) != 0) {
        fprintf(stderr, "gpubench: %s\n", err);
        goto done;
    }
    if (res.status >= 400) {
        cli_report_error(c, &res);
        goto done;
    }
    if ((*out = cJSON_Parse(res.body.data ? res.body.data : "")) == NULL) {
        fprintf(stderr, "gpubench: %s%s: the answer (HTTP %ld) is not JSON\n", c->opt.url, path,
                res.status);
        goto done;
    }
    if (echo)
        printf("%s%s", res.body.data,
               res.body.len && res.body.data[res.body.len - 1] == '\n' ? "" : "\n");
    rc = CLI_OK;
done:
    gb_response_free(&res);
    return rc;
}

int cli_get_json(struct cli *c, const char *path, cJSON **out)
{
    return cli_request_json(c, "GET", path, NULL, 0, c->opt.json, out);
}
