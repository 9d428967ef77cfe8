/*
 * reply_again.c - see reply_again.h.
 */
#include "reply_again.h"

#include <microhttpd.h>
#include <pthread.h>
#include <string.h>

struct kept {
    struct MHD_Response *resp; /* NULL: none */
    const void *hold;
    const char *body;
    size_t len;
    int status;
    const char *content_type;
    char etag[sizeof(((struct http_reply *)0)->etag)];
};

static _Thread_local struct kept kept;
static pthread_key_t thread_end;
static pthread_once_t thread_end_once = PTHREAD_ONCE_INIT;

/* A thread's end: its kept response destroyed (the hold let go). */
static void let_go(void *unused)
{
    (void)unused;
    if (kept.resp)
        MHD_destroy_response(kept.resp);
    memset(&kept, 0, sizeof(kept));
}

static void make_key(void)
{
    if (pthread_key_create(&thread_end, let_go) != 0)
        thread_end = (pthread_key_t)-1;
}

int reply_again_keepable(const struct http_reply *rep)
{
#if MHD_VERSION >= 0x00097302
    return rep->release != NULL && rep->stream == NULL && rep->len <= REPLY_AGAIN_MAX_BYTES &&
           rep->location[0] == '\0' &&
           rep->allow[0] == '\0' && rep->www_authenticate[0] == '\0' && rep->csp == NULL &&
           rep->retry_after <= 0 && strlen(rep->etag) < sizeof(kept.etag);
#else
    (void)rep;
    return 0; /* a held body is copied and let go at once (http.c) */
#endif
}

struct MHD_Response *reply_again_find(struct http_reply *rep)
{
    if (kept.resp == NULL || rep->hold != kept.hold || rep->body != kept.body ||
        rep->len != kept.len || rep->status != kept.status ||
        rep->content_type != kept.content_type || strcmp(rep->etag, kept.etag) != 0)
        return NULL;
    rep->release(rep->hold); /* the kept response holds the body */
    rep->release = NULL;
    rep->hold = NULL;
    rep->body = NULL;
    return kept.resp;
}

int reply_again_keep(const struct http_reply *rep, const void *hold, const char *body,
                     struct MHD_Response *resp)
{
    pthread_once(&thread_end_once, make_key);
    if (kept.resp == NULL &&
        (thread_end == (pthread_key_t)-1 || pthread_setspecific(thread_end, &kept) != 0))
        return 0; /* no destructor: nothing kept past the thread */
    if (kept.resp)
        MHD_destroy_response(kept.resp);
    kept = (struct kept){resp, hold, body, rep->len, rep->status, rep->content_type, ""};
    memcpy(kept.etag, rep->etag, strlen(rep->etag) + 1);
    return 1;
}
