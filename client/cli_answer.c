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
    /* a refused token in the client's own words, not the header's */
    if (res->status == 401 && c->token_from == NULL && msg && strstr(msg, "bearer token"))
        fprintf(stderr,
                "gpubench: the daemon needs a token: use --token-file FILE (its first line is "
                "the token) or GPUBENCH_TOKEN%s (unauthorized, HTTP 401)\n",
                strstr(msg, "client certificate") ? ", or a client certificate: --cert FILE" : "");
    else if (res->status == 401 && c->token_from == NULL && msg)
        fprintf(stderr,
                "gpubench: %s: use --cert FILE and --key FILE (or GPUBENCH_CERT, GPUBENCH_KEY) "
                "(unauthorized, HTTP 401)\n",
                msg);
    else if (res->status == 401 && code && strcmp(code, "unauthorized") == 0)
        fprintf(stderr, "gpubench: the daemon refused the token of %s%s (%s, HTTP 401)\n",
                strcmp(c->token_from, "GPUBENCH_TOKEN") == 0 ? "" : "--token-file ",
                c->token_from, code);
    else if (msg && code)
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
