/* The route table: a suffix form takes its segment without the suffix and
 * goes before the plain "*", a route's limits come with it, and the Allow
 * list of a 405 names each method once (and a route found has none). */
#include "handlers.h"
#include "router.h"
#include "test.h"

static int test_suffix(void)
{
    char arg[128], allow[64];
    int status = 0;
    const struct route *r;

    r = router_find("GET", "/runs/0190a1b2-0000-7000-8000-000000000000.csv", arg,
                    sizeof(arg), allow, sizeof(allow), &status);
    ASSERT(r != NULL);
    ASSERT(r->handler == api_run_csv);
    ASSERT_STR_EQ(arg, "0190a1b2-0000-7000-8000-000000000000");
    r = router_find("GET", "/runs/abc", arg, sizeof(arg), allow, sizeof(allow), &status);
    ASSERT(r != NULL && r->handler == api_runs_get);
    ASSERT_STR_EQ(arg, "abc");
    /* ".csv" alone is no id. */
    r = router_find("GET", "/runs/.csv", arg, sizeof(arg), allow, sizeof(allow), &status);
    ASSERT(r != NULL && r->handler == api_runs_get);
    r = router_find("POST", "/runs/x.csv", arg, sizeof(arg), allow, sizeof(allow), &status);
    ASSERT(r == NULL);
    ASSERT_EQ(status, 405);
    ASSERT_STR_EQ(allow, "GET, DELETE, HEAD");
    r = router_find("GET", "/runs/a/b", arg, sizeof(arg), allow, sizeof(allow), &status);
    ASSERT(r == NULL);
    ASSERT_EQ(status, 404);
    /* A route found carries no Allow list, though "POST /runs" goes before
     * "GET /runs" in the table; and a route without "*" leaves arg empty. */
    r = router_find("GET", "/runs", arg, sizeof(arg), allow, sizeof(allow), &status);
    ASSERT(r != NULL && r->handler == api_runs_list);
    ASSERT_STR_EQ(allow, "");
    ASSERT_STR_EQ(arg, "");
    return 0;
}

static int test_limits(void)
{
    char arg[128], allow[64];
    int status = 0;
    const struct route *r;

    r = router_find("POST", "/runs", arg, sizeof(arg), allow, sizeof(allow), &status);
    ASSERT(r != NULL && r->rate_limited && r->access == ROUTE_WRITE);
    r = router_find("POST", "/runs/import", arg, sizeof(arg), allow, sizeof(allow), &status);
    /* An import is a write like a post: it counts against --rate-limit. */
    ASSERT(r != NULL && r->rate_limited && r->handler == api_runs_import);
    ASSERT_EQ(r->body->cap, 64 * 1024 * 1024);
    ASSERT_STR_EQ(r->body->types, "application/x-ndjson, application/json");
    r = router_find("GET", "/healthz", arg, sizeof(arg), allow, sizeof(allow), &status);
    ASSERT(r != NULL && r->access == ROUTE_PUBLIC);
    r = router_find("POST", "/runs", arg, sizeof(arg), allow, sizeof(allow), &status);
    ASSERT_EQ(r->body->cap, HTTP_BODY_CAP);
    ASSERT_STR_EQ(r->body->types, "application/json");
    return 0;
}

TEST_MAIN({"suffix", test_suffix}, {"limits", test_limits})
