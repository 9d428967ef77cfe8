/*
 * api_cards.c - GET /cards and GET /cards/UUID: parse ?max_age=,
 * ask the runs layer (cards.c, which judges each card's state with
 * server/judge/card_state.c), print the answer; one card's with who
 * speaks for it here (its "owner": store_owners.h), which DELETE
 * /cards/UUID/owner releases (README "A fleet": moving a card).
 */
#include "app.h"
#include "card_state.h"
#include "cards.h"
#include "duration.h"
#include "gpu_pool.h"
#include "handlers.h"
#include "json_build.h"
#include "store.h"
#include "store_owners.h"

/* ?max_age= into *ms (default card_state.h's); -1 when it was answered
 * 400. */
static int max_age(struct http_request *req, struct http_reply *rep, int64_t *ms)
{
    static const char *const query[] = {"max_age", NULL};
    const char *v;

    *ms = CARD_MAX_AGE_DEFAULT_MS;
    if (query_check(req, rep, query) != 0)
        return -1;
    if ((v = query_get(req, "max_age")) != NULL && gb_duration_ms(v, ms) != 0) {
        reply_error(rep, 400, "out_of_bounds", "max_age",
                    "max_age=%.40s: expected " GB_DURATION_EXPECTED, v);
        return -1;
    }
    return 0;
}

void api_cards_get_all(struct http_request *req, struct http_reply *rep)
{
    struct json_build jb = {0};
    cJSON *own, *cards = NULL, *out;
    int64_t ms;
    int rc;

    if (max_age(req, rep, &ms) != 0)
        return;
    own = gpu_pool_describe(req->app->gpus);
    rc = cards_list(req->app->store, own, ms, &cards);
    cJSON_Delete(own);
    if (rc != STORE_OK) {
        reply_store_error(rep, rc, "the cards could not be read");
        return;
    }
    out = jb_new_object(&jb);
    jb_number(&jb, out, "max_age_s", (double)ms / 1000.0);
    jb_item(&jb, out, "cards", cards); /* out's now, or deleted */
    reply_built(rep, 200, &jb, out, "listing the cards");
}

void api_cards_get_one(struct http_request *req, struct http_reply *rep)
{
    struct json_build jb = {0};
    cJSON *own, *card = NULL, *owner = NULL;
    int64_t ms;
    int rc;

    if (max_age(req, rep, &ms) != 0)
        return;
    own = gpu_pool_describe(req->app->gpus);
    rc = cards_get(req->app->store, own, req->arg, ms, &card);
    cJSON_Delete(own);
    if (rc == STORE_OK && (rc = store_card_owner(req->app->store, req->arg, &owner)) == STORE_OK)
        jb_item(&jb, card, "owner",
                owner && owner->child ? cJSON_DetachItemFromArray(owner, 0) : cJSON_CreateNull());
    cJSON_Delete(owner);
    if (rc != STORE_OK) {
        cJSON_Delete(card);
        reply_card_error(rep, rc, req->arg, "the card could not be read");
        return;
    }
    reply_built(rep, 200, &jb, card, "describing the card");
}

void api_card_owner_delete(struct http_request *req, struct http_reply *rep)
{
    static const char *const no_query[] = {NULL};
    struct json_build jb = {0};
    cJSON *was = NULL, *out;
    int rc;

    if (query_check(req, rep, no_query) != 0)
        return;
    rc = store_card_release(req->app->store, req->arg, &was);
    if (rc == STORE_NOT_FOUND) {
        reply_error(rep, 404, "not_found", "",
                    "card %.80s has no owner here: the next run naming it claims it", req->arg);
        return;
    }
    if (rc != STORE_OK) {
        reply_store_error(rep, rc, "the card's owner could not be released");
        return;
    }
    out = jb_new_object(&jb);
    jb_string(&jb, out, "uuid", req->arg);
    jb_item(&jb, out, "released", was); /* out's now, or deleted */
    reply_built(rep, 200, &jb, out, "saying which owner was released");
}
