/* The shared texts' count (counted.h) and the response each
 * libmicrohttpd thread keeps for its last held answer (reply_again.h):
 * a count frees once, at its last hold, across threads; a kept response
 * is found again only for the same answer; and a body over
 * REPLY_AGAIN_MAX_BYTES (a hub's whole /metrics) is never kept, so no
 * thread holds a replaced one. */
#include "counted.h"
#include "http.h"
#include "reply_again.h"
#include "test.h"

#include <microhttpd.h>
#include <pthread.h>
#include <stdlib.h>

struct text {
    struct counted ref;
    int *freed;
    char *data;
};

static void text_free(struct counted *c)
{
    struct text *t = (struct text *)c;

    (*t->freed)++;
    free(t->data);
    free(t);
}

static struct text *text_new(size_t len, int *freed)
{
    struct text *t = calloc(1, sizeof(*t));

    if (t == NULL || (t->data = calloc(1, len + 1)) == NULL) {
        free(t);
        return NULL;
    }
    memset(t->data, 'x', len);
    t->freed = freed;
    counted_init(&t->ref, 1, text_free);
    return t;
}

static void *hold_and_release(void *arg)
{
    for (int i = 0; i < 20000; i++) {
        counted_hold(arg);
        counted_release(arg);
    }
    return NULL;
}

static int test_counted_frees_once_at_the_last_hold(void)
{
    int freed = 0;
    struct text *t = text_new(16, &freed);
    pthread_t th[4];

    ASSERT(t != NULL);
    counted_hold(&t->ref);
    counted_release(t);
    ASSERT_EQ(freed, 0);
    for (int i = 0; i < 4; i++)
        ASSERT_EQ(pthread_create(&th[i], NULL, hold_and_release, &t->ref), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    ASSERT_EQ(freed, 0); /* the maker's hold is still there */
    counted_release(t);
    ASSERT_EQ(freed, 1);
    counted_release(NULL); /* nothing */
    return 0;
}

/* A held reply of t, as api_runs.c makes one. */
static void held(struct http_reply *rep, struct text *t, size_t len)
{
    memset(rep, 0, sizeof(*rep));
    counted_hold(&t->ref);
    reply_held(rep, 200, "application/json", t->data, len, counted_release, t);
}

/* The response http.c makes for a held reply: the body let go with it. */
static struct MHD_Response *response_of(struct http_reply *rep)
{
#if MHD_VERSION >= 0x00097302
    return MHD_create_response_from_buffer_with_free_callback_cls(rep->len, rep->body,
                                                                  rep->release, rep->hold);
#else
    (void)rep;
    return NULL;
#endif
}

struct keeping {
    int freed, freed_other, failed;
};

/* On a thread of its own, as a libmicrohttpd thread: its kept response is
 * let go when it ends. */
static int keep_and_find(struct keeping *k)
{
    struct text *t = text_new(1000, &k->freed), *other = text_new(1000, &k->freed_other);
    struct http_reply rep;
    struct MHD_Response *resp;

    ASSERT(t != NULL && other != NULL);
    held(&rep, t, 1000);
    ASSERT(reply_again_keepable(&rep));
    ASSERT(reply_again_find(&rep) == NULL); /* nothing kept yet */
    resp = response_of(&rep);
    ASSERT(resp != NULL);
    ASSERT_EQ(reply_again_keep(&rep, t, t->data, resp), 1);
    /* the same answer: the kept response, and the new hold let go */
    held(&rep, t, 1000);
    ASSERT(reply_again_find(&rep) == resp);
    ASSERT(rep.release == NULL && rep.hold == NULL);
    /* another body, or the same with another status, is not it */
    held(&rep, other, 1000);
    ASSERT(reply_again_find(&rep) == NULL);
    rep.release(rep.hold);
    held(&rep, t, 1000);
    rep.status = 201;
    ASSERT(reply_again_find(&rep) == NULL);
    rep.release(rep.hold);
    /* a Location makes an answer one of its own */
    held(&rep, t, 1000);
    snprintf(rep.location, sizeof(rep.location), "/runs/x");
    ASSERT(!reply_again_keepable(&rep));
    rep.release(rep.hold);
    /* keeping another lets go of the response kept before, and so of t's
     * hold in it: the maker's is the last */
    held(&rep, other, 1000);
    resp = response_of(&rep);
    ASSERT(resp != NULL);
    ASSERT_EQ(reply_again_keep(&rep, other, other->data, resp), 1);
    counted_release(t);
    ASSERT_EQ(k->freed, 1);
    counted_release(other);
    ASSERT_EQ(k->freed_other, 0); /* the kept response still holds it */
    return 0;
}

static void *keeping_thread(void *arg)
{
    struct keeping *k = arg;

    k->failed = keep_and_find(k);
    return NULL;
}

static int test_the_same_answer_is_found_again(void)
{
    struct keeping k = {0};
    pthread_t th;

    if (MHD_VERSION < 0x00097302) {
        printf("SKIPPED: libmicrohttpd before 0.9.73 keeps no response (a held body is "
               "copied)\n");
        return 0;
    }
    ASSERT_EQ(pthread_create(&th, NULL, keeping_thread, &k), 0);
    pthread_join(th, NULL);
    ASSERT_EQ(k.failed, 0);
    ASSERT_EQ(k.freed_other, 1); /* the thread's end let go of its kept response */
    return 0;
}

static int test_a_big_body_is_never_kept(void)
{
    int freed = 0;
    struct text *t = text_new(REPLY_AGAIN_MAX_BYTES + 1, &freed);
    struct http_reply rep;

    ASSERT(t != NULL);
    held(&rep, t, REPLY_AGAIN_MAX_BYTES + 1);
    ASSERT(!reply_again_keepable(&rep));
    rep.release(rep.hold);
    held(&rep, t, REPLY_AGAIN_MAX_BYTES);
    ASSERT(reply_again_keepable(&rep) == (MHD_VERSION >= 0x00097302));
    rep.release(rep.hold);
    counted_release(t);
    ASSERT_EQ(freed, 1);
    return 0;
}

TEST_MAIN({"counted_frees_once_at_the_last_hold", test_counted_frees_once_at_the_last_hold},
          {"the_same_answer_is_found_again", test_the_same_answer_is_found_again},
          {"a_big_body_is_never_kept", test_a_big_body_is_never_kept})
