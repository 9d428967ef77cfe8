/*
 * json_span.c - see json_span.h.  One pass over the object's members,
 * however many are sought;
 * each value is skipped by its first byte: a string to its closing quote
 * (memchr, escapes counted), an object or array to the bracket that closes
 * it (strings inside skipped the same way), anything else to the next
 * delimiter.
 */
#include "json_span.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static size_t skip_ws(const char *t, size_t len, size_t i)
{
    while (i < len && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r'))
        i++;
    return i;
}

/* i at an opening quote: the index after the closing one, or len + 1
 * when the text ends first.  Each quote is found with memchr; it closes
 * the string when an even number of backslashes stands before it. */
static size_t skip_string(const char *t, size_t len, size_t i)
{
    size_t open = i;

    for (i++; i < len;) {
        const char *q = memchr(t + i, '"', len - i);
        size_t j, bs = 0;

        if (q == NULL)
            break;
        j = (size_t)(q - t);
        while (j - bs - 1 > open && t[j - bs - 1] == '\\')
            bs++;
        if (bs % 2 == 0)
            return j + 1;
        i = j + 1;
    }
    return len + 1;
}

/* The bytes a container's skip stops at: the rest is stepped over. */
static const unsigned char container_stop[256] = {
    ['"'] = 1,
    ['{'] = 1,
    ['['] = 1,
    ['}'] = 1,
    [']'] = 1,
};

/* i at a value's first byte: the index after the value, or len + 1 when
 * the text ends inside it. */
static size_t skip_value(const char *t, size_t len, size_t i)
{
    int depth = 0;

    if (i >= len)
        return len + 1;
    if (t[i] == '"')
        return skip_string(t, len, i);
    if (t[i] != '{' && t[i] != '[') {
        while (i < len && t[i] != ',' && t[i] != '}' && t[i] != ']' && t[i] != ' ' &&
               t[i] != '\t' && t[i] != '\n' && t[i] != '\r')
            i++;
        return i;
    }
    while (i < len) {
        if (!container_stop[(unsigned char)t[i]]) {
            i++;
            continue;
        }
        if (t[i] == '"') {
            if ((i = skip_string(t, len, i)) > len)
                return len + 1;
            continue;
        }
        if (t[i] == '{' || t[i] == '[')
            depth++;
        else if (--depth == 0)
            return i + 1;
        i++;
    }
    return len + 1;
}

/* Notes member key (klen raw bytes, escaped if it holds a backslash),
 * whose value is [value, end), against each span sought. */
static void note_member(struct json_span *spans, int n, const char *key, size_t klen,
                        int escaped, size_t value, size_t end)
{
    for (int k = 0; k < n; k++) {
        struct json_span *sp = &spans[k];
        size_t want = strlen(sp->name);

        /* A name with escapes may decode to name: undecidable here. */
        if (escaped && want <= klen) {
            sp->found = -1;
            continue;
        }
        if (escaped || klen != want || strncasecmp(key, sp->name, want) != 0)
            continue;
        if (sp->found != 0 || strncmp(key, sp->name, want) != 0) {
            sp->found = -1; /* a second one, or another case: cJSON's pick */
            continue;
        }
        sp->found = 1;
        sp->start = value;
        sp->len = end - value;
    }
}

int json_member_spans(const char *text, size_t len, struct json_span *spans, int n)
{
    size_t i = skip_ws(text, len, 0);
    int rc = -1;

    for (int k = 0; k < n; k++)
        spans[k].found = 0;
    if (i >= len || text[i] != '{')
        goto done;
    for (i++;;) {
        size_t key, key_end, value;

        i = skip_ws(text, len, i);
        if (i >= len || text[i] != '"')
            break; /* the members are over */
        key = i + 1;
        if ((key_end = skip_string(text, len, i)) > len)
            goto done;
        i = skip_ws(text, len, key_end);
        if (i >= len || text[i] != ':')
            goto done;
        value = skip_ws(text, len, i + 1);
        if ((i = skip_value(text, len, value)) > len)
            goto done;
        note_member(spans, n, text + key, key_end - 1 - key,
                    memchr(text + key, '\\', key_end - 1 - key) != NULL, value, i);
        i = skip_ws(text, len, i);
        if (i < len && text[i] == ',')
            i++;
    }
    /* Only an object that closes is the one cJSON parsed. */
    if (i < len && text[i] == '}')
        rc = 0;

done:
    for (int k = 0; k < n; k++)
        if (rc != 0 || spans[k].found != 1)
            spans[k].found = 0;
    return rc;
}

int json_member_span(const char *text, size_t len, const char *name, size_t *start,
                     size_t *vlen)
{
    struct json_span sp = {.name = name};

    if (json_member_spans(text, len, &sp, 1) != 0 || !sp.found)
        return -1;
    *start = sp.start;
    *vlen = sp.len;
    return 0;
}

/* json_copy_without's walk: the text, where the copy goes, and the names
 * it leaves out. */
struct prune {
    const char *t;
    size_t len;
    char *out;
    size_t o;
    const char *name, *top_name;
};

static int name_is(const char *key, size_t klen, const char *name)
{
    return name && strlen(name) == klen && memcmp(key, name, klen) == 0;
}

/* Copies the value at *i (whitespace before it skipped) into p->out and
 * moves *i past it; top: it is the outermost value.  0, or -1. */
static int copy_value(struct prune *p, size_t *i, int top)
{
    const char *t = p->t;
    size_t at = skip_ws(t, p->len, *i), end;
    char open, close;
    int first = 1, dropped_name = 0, dropped_top = 0;

    if (at >= p->len)
        return -1;
    open = t[at];
    if (open != '{' && open != '[') {
        if ((end = skip_value(t, p->len, at)) > p->len || end == at)
            return -1;
        memcpy(p->out + p->o, t + at, end - at);
        p->o += end - at;
        *i = end;
        return 0;
    }
    close = open == '{' ? '}' : ']';
    p->out[p->o++] = open;
    at = skip_ws(t, p->len, at + 1);
    if (at < p->len && t[at] == close) {
        p->out[p->o++] = close;
        *i = at + 1;
        return 0;
    }
    for (;;) {
        if (open == '{') {
            size_t key = at, key_end;
            int drop;
            if (at >= p->len || t[at] != '"' || (key_end = skip_string(t, p->len, at)) > p->len ||
                memchr(t + key, '\\', key_end - key) != NULL)
                return -1; /* a name with escapes: the tree decides */
            drop = name_is(t + key + 1, key_end - key - 2, p->name);
            dropped_name += drop;
            if (!drop && top && name_is(t + key + 1, key_end - key - 2, p->top_name))
                drop = ++dropped_top;
            if (dropped_name > 1 || dropped_top > 1)
                return -1; /* cJSON's delete takes the first only */
            at = skip_ws(t, p->len, key_end);
            if (at >= p->len || t[at] != ':')
                return -1;
            at++;
            if (drop) {
                if ((at = skip_value(t, p->len, skip_ws(t, p->len, at))) > p->len)
                    return -1;
            } else {
                if (!first)
                    p->out[p->o++] = ',';
                memcpy(p->out + p->o, t + key, key_end - key);
                p->o += key_end - key;
                p->out[p->o++] = ':';
                if (copy_value(p, &at, 0) != 0)
                    return -1;
                first = 0;
            }
        } else {
            if (!first)
                p->out[p->o++] = ',';
            if (copy_value(p, &at, 0) != 0)
                return -1;
            first = 0;
        }
        at = skip_ws(t, p->len, at);
        if (at < p->len && t[at] == ',') {
            at = skip_ws(t, p->len, at + 1);
            continue;
        }
        if (at < p->len && t[at] == close) {
            p->out[p->o++] = close;
            *i = at + 1;
            return 0;
        }
        return -1;
    }
}

char *json_copy_without(const char *text, size_t len, const char *name, const char *top_name)
{
    /* the copy is never longer than the text: only commas between kept
     * members are written, and each stood in the text */
    struct prune p = {.t = text, .len = len, .name = name, .top_name = top_name};
    size_t i = 0;

    if ((p.out = malloc(len + 1)) == NULL)
        return NULL;
    if (copy_value(&p, &i, 1) != 0 || skip_ws(text, len, i) != len) {
        free(p.out);
        return NULL;
    }
    p.out[p.o] = '\0';
    return p.out;
}
