/*
 * api_openapi.c - GET /openapi.json: the API described in OpenAPI 3.1.
 *
 * The document is api/openapi.json in the source tree, embedded at build
 * time (cmake/embed_file.cmake) as migrations are, so what is served is
 * what the API tests validate every answer against (tests/api/
 * openapi_check.py); nothing here assembles it.
 */
#include "handlers.h"

#include <stdlib.h>
#include <string.h>

/* generated/openapi_doc.c */
extern const char openapi_json[];
extern const size_t openapi_json_len;

void api_openapi_get(struct http_request *req, struct http_reply *rep)
{
    static const char *const no_query[] = {NULL};
    char *body;

    if (query_check(req, rep, no_query) != 0)
        return;
    body = malloc(openapi_json_len + 1);
    if (body == NULL) {
        reply_error(rep, 500, "internal", "", "out of memory");
        return;
    }
    memcpy(body, openapi_json, openapi_json_len + 1);
    reply_body(rep, 200, "application/json", body, openapi_json_len);
}
