/* worker_msg_parse: every kind of line a worker may send, and the ones it
 * must not be trusted with. */
#include "test.h"
#include "worker_msg.h"

static enum worker_event kind(const char *line, const char *run)
{
    struct worker_msg m;
    enum worker_event e;

    worker_msg_parse(line, strlen(line), run, &m);
    e = m.event;
    worker_msg_free(&m);
    return e;
}

static int test_events(void)
{
    struct worker_msg m;
    const char *p = "{\"id\":\"r1\",\"event\":\"progress\",\"done\":3,\"total\":7}";
    const char *e = "{\"id\":\"r1\",\"event\":\"error\",\"code\":\"cuda_error\",\"message\":\"x\"}";

    worker_msg_parse(p, strlen(p), "r1", &m);
    ASSERT_EQ(m.event, WM_PROGRESS);
    ASSERT_NEAR(m.done, 3, 0);
    ASSERT_NEAR(m.total, 7, 0);
    worker_msg_free(&m);
    worker_msg_parse(e, strlen(e), "r1", &m);
    ASSERT_EQ(m.event, WM_ERROR);
    ASSERT(m.fatal);
    ASSERT_STR_EQ(m.code, "cuda_error");
    worker_msg_free(&m);
    ASSERT_EQ(kind("{\"id\":\"r1\",\"event\":\"result\","
                   "\"result\":{\"rows\":[]},\"meta\":{}}",
                   "r1"),
              WM_RESULT);
    ASSERT_EQ(kind("{\"id\":\"r1\",\"event\":\"result\",\"result\":{}}", "r1"), WM_BAD_RESULT);
    ASSERT_EQ(kind("{\"id\":\"r1\",\"event\":\"error\",\"code\":\"invalid_params\"}", "r1"),
              WM_ERROR);
    return 0;
}

static int test_not_trusted(void)
{
    ASSERT_EQ(kind("not json", "r1"), WM_IGNORED);
    ASSERT_EQ(kind("{\"id\":\"r2\",\"event\":\"result\",\"result\":{\"rows\":[]}}", "r1"),
              WM_IGNORED);
    ASSERT_EQ(kind("{\"id\":\"r1\",\"event\":\"hello\"}", "r1"), WM_IGNORED);
    ASSERT_EQ(kind("{\"id\":\"r1\",\"event\":\"progress\",\"done\":-1,\"total\":7}", "r1"),
              WM_IGNORED);
    /* Found by the fuzzer: a number no long holds must not be converted. */
    ASSERT_EQ(kind("{\"id\":\"r1\",\"event\":\"progress\",\"done\":1e300,\"total\":7}", "r1"),
              WM_IGNORED);
    ASSERT_EQ(kind("{\"id\":\"r1\",\"event\":\"progress\",\"done\":1,\"total\":1e16}", "r1"),
              WM_IGNORED);
    ASSERT_EQ(kind("[1,2]", "r1"), WM_IGNORED);
    return 0;
}

/* Issue 13: a waiting worker says why in its progress lines; the message
 * is kept, an empty or non-string one is no message. */
static int test_progress_message(void)
{
    struct worker_msg m;
    const char *w = "{\"id\":\"r1\",\"event\":\"progress\",\"done\":0,\"total\":0,"
                    "\"message\":\"waiting for a quiet card: pid 4242 python3\"}";
    const char *empty = "{\"id\":\"r1\",\"event\":\"progress\",\"done\":1,\"total\":2,"
                        "\"message\":\"\"}";
    const char *number = "{\"id\":\"r1\",\"event\":\"progress\",\"done\":1,\"total\":2,"
                         "\"message\":7}";

    worker_msg_parse(w, strlen(w), "r1", &m);
    ASSERT_EQ(m.event, WM_PROGRESS);
    ASSERT_STR_EQ(m.message, "waiting for a quiet card: pid 4242 python3");
    worker_msg_free(&m);
    worker_msg_parse(empty, strlen(empty), "r1", &m);
    ASSERT_EQ(m.event, WM_PROGRESS);
    ASSERT(m.message == NULL);
    worker_msg_free(&m);
    worker_msg_parse(number, strlen(number), "r1", &m);
    ASSERT_EQ(m.event, WM_PROGRESS);
    ASSERT(m.message == NULL);
    worker_msg_free(&m);
    return 0;
}

TEST_MAIN({"progress, result and error", test_events},
          {"progress message", test_progress_message},
          {"lines not to be trusted", test_not_trusted})
