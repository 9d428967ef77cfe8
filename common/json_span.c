/*
 * json_span.c - see json_span.h.  One pass over the object's members;
 * each value is skipped by its first byte: a string to its closing quote
 * (escapes stepped over), an object or array to the bracket that closes
 * it (strings inside skipped the same way), anything else to the next
 * delimiter.
 */
#include "json_span.h"

#include <string.h>
#include <strings.h>

static size_t skip_ws(const char *t, size_t len, size_t i)
{
    while (i < len && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r'))
        i++;
    return i;
}

/* i at an opening quote: the index after the closing one, or len + 1
 * when the text ends first. */
static size_t skip_string(const char *t, size_t len, size_t i)
{
    for (i++; i < len; i++) {
        if (t[i] == '\\')
            i++;
        else if (t[i] == '"')
            return i + 1;
    }
    return len + 1;
}

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
        if (t[i] == '"') {
            if ((i = skip_string(t, len, i)) > len)
                return len + 1;
            continue;
        }
        if (t[i] == '{' || t[i] == '[')
            depth++;
        else if ((t[i] == '}' || t[i] == ']') && --depth == 0)
            return i + 1;
        i++;
    }
    return len + 1;
}

int json_member_span(const char *text, size_t len, const char *name, size_t *start,
                     size_t *vlen)
{
    size_t i = skip_ws(text, len, 0), n = strlen(name);
    int found = 0;

    if (i >= len || text[i] != '{')
        return -1;
    for (i++;;) {
        size_t key, key_end, value;
        int escaped;

        i = skip_ws(text, len, i);
        if (i >= len || text[i] != '"')
            break; /* the members are over */
        key = i + 1;
        key_end = skip_string(text, len, i);
        if (key_end > len)
            return -1;
        escaped = memchr(text + key, '\\', key_end - 1 - key) != NULL;
        i = skip_ws(text, len, key_end);
        if (i >= len || text[i] != ':')
            return -1;
        value = skip_ws(text, len, i + 1);
        if ((i = skip_value(text, len, value)) > len)
            return -1;
        /* A name with escapes may decode to name: undecidable here. */
        if (escaped && n <= key_end - 1 - key)
            return -1;
        if (!escaped && key_end - 1 - key == n && strncasecmp(text + key, name, n) == 0) {
            if (found || strncmp(text + key, name, n) != 0)
                return -1; /* a second one, or another case: cJSON's pick */
            found = 1;
            *start = value;
            *vlen = i - value;
        }
        i = skip_ws(text, len, i);
        if (i < len && text[i] == ',')
            i++;
    }
    /* Only an object that closes is the one cJSON parsed. */
    return found && i < len && text[i] == '}' ? 0 : -1;
}
