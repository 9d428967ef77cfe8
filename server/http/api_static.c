/*
 * api_static.c - the web page: GET / is web/index.html, GET /static/NAME
 * a file of web/, GET /static/lib/NAME and /static/views/NAME a file of
 * those two folders (the page's ES modules: its shared library and one
 * module per view), GET /vendor/chart.js the Chart.js that Debian's
 * libjs-chart.js installs (--chartjs).  NAME is one path segment of safe
 * characters (the router already refuses a "/" in it) and the folders are
 * fixed by the route, so nothing outside web/ can be named; there is no
 * directory listing.
 */
#include "dynbuf.h"
#include "handlers.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STATIC_FILE_CAP (8 * 1024 * 1024)

static const struct {
    const char *ext;
    const char *type;
} types[] = {
    {".html", "text/html; charset=utf-8"},
    {".js", "text/javascript; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},
    {".svg", "image/svg+xml"},
    {".png", "image/png"},
    {".json", "application/json"},
    {".ico", "image/x-icon"},
};

static const char *content_type(const char *name)
{
    const char *dot = strrchr(name, '.');

    for (size_t i = 0; dot && i < sizeof(types) / sizeof(types[0]); i++)
        if (strcmp(dot, types[i].ext) == 0)
            return types[i].type;
    return NULL;
}

static int safe_name(const char *name)
{
    if (name[0] == '\0' || name[0] == '.')
        return 0;
    for (const char *c = name; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
              (*c >= '0' && *c <= '9') || *c == '.' || *c == '_' || *c == '-'))
            return 0;
    return 1;
}

/* Answers with the file at path, typed by name's extension. */
static void send_path(struct http_reply *rep, const char *path, const char *name)
{
    const char *type = content_type(name);
    char chunk[65536];
    struct dynbuf buf;
    FILE *f;
    size_t n;
    char *body;

    f = type ? fopen(path, "rb") : NULL;
    if (f == NULL) {
        reply_error(rep, 404, "not_found", "", "no such file: %.60s", name);
        return;
    }
    dynbuf_init(&buf, STATIC_FILE_CAP);
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
        if (dynbuf_add(&buf, chunk, n) != 0) {
            fclose(f);
            dynbuf_free(&buf);
            reply_error(rep, 500, "internal", "", "%.60s is too large to serve", name);
            return;
        }
    }
    fclose(f);
    body = dynbuf_take(&buf, &n);
    reply_body(rep, 200, type, body, n);
    /* The page loads only its own scripts and styles, and talks only to
     * this daemon: an injected script has nowhere to come from. */
    if (strncmp(type, "text/html", 9) == 0)
        rep->csp = "default-src 'self'; script-src 'self'; style-src 'self'; "
                   "img-src 'self' data:; connect-src 'self'; object-src 'none'; "
                   "base-uri 'none'; frame-ancestors 'none'; form-action 'self'";
}

/* Answers with web/DIR/NAME; dir is "" or a folder of web/ with its "/",
 * from the route, never from the request. */
static void send_file(struct http_request *req, struct http_reply *rep,
                      const char *dir, const char *name)
{
    char path[4600];

    if (!safe_name(name)) {
        reply_error(rep, 404, "not_found", "", "no such file: %.60s", name);
        return;
    }
    snprintf(path, sizeof(path), "%s/%s%s", req->app->opt->web, dir, name);
    send_path(rep, path, name);
}

void api_static_index(struct http_request *req, struct http_reply *rep)
{
    send_file(req, rep, "", "index.html");
}

void api_static_file(struct http_request *req, struct http_reply *rep)
{
    send_file(req, rep, "", req->arg);
}

void api_static_lib_file(struct http_request *req, struct http_reply *rep)
{
    send_file(req, rep, "lib/", req->arg);
}

void api_static_view_file(struct http_request *req, struct http_reply *rep)
{
    send_file(req, rep, "views/", req->arg);
}

int http_chartjs_problem(const char *path, char *why, size_t cap)
{
    FILE *f = path ? fopen(path, "rb") : NULL;
    int is_default = path && strcmp(path, HTTP_CHARTJS_DEFAULT) == 0;

    if (f != NULL) {
        fclose(f);
        return 0;
    }
    snprintf(why, cap, "Chart.js cannot be read at %.200s (%s): %s",
             path ? path : "(none)", path ? strerror(errno) : "no path",
             is_default ? "install Debian's libjs-chart.js (apt-get install libjs-chart.js) "
                          "or start gpubenchd with --chartjs PATH"
                        : "--chartjs names a file that is not there; give the path of "
                          "chart.min.js (Debian's libjs-chart.js installs " HTTP_CHARTJS_DEFAULT
                          ")");
    return -1;
}

void api_static_chartjs(struct http_request *req, struct http_reply *rep)
{
    char why[512];

    if (http_chartjs_problem(req->app->opt->chartjs, why, sizeof(why)) != 0) {
        reply_error(rep, 404, "not_found", "", "%s", why);
        return;
    }
    send_path(rep, req->app->opt->chartjs, "chart.js");
}
