/*
 * json_span.h - where a top-level member's value lies in the text of a
 * JSON object, so that a value that was parsed only to be judged can be
 * stored as the bytes it arrived as instead of being printed again (a
 * pulled run's results hold thousands of numbers; printing each one back
 * costs more than everything else a hub does with the run).
 *
 * It is a scanner, not a parser: the text must already have parsed as one
 * JSON object (cJSON), and the span is used only where it is certainly
 * the same member cJSON gave: a name written with escapes, or a second
 * member whose name matches in any letter case (cJSON's lookups ignore
 * case), and the answer is "not found", so that the caller prints the
 * parsed value as before.
 */
#ifndef GPUBENCH_COMMON_JSON_SPAN_H
#define GPUBENCH_COMMON_JSON_SPAN_H

#include <stddef.h>

/* Where one member's value lies: its first byte and its length. */
struct json_span {
    const char *name; /* plain ASCII, set by the caller */
    size_t start;
    size_t len;
    int found; /* 1: found exactly once; 0: absent or ambiguous */
};

/* Finds the n members of spans (each .name set) in one pass over the
 * object in text (len bytes), setting each .found, .start and .len.  0,
 * or -1 when text is not an object this scanner can follow (then none is
 * found).  A member not found exactly once (absent, twice, in another
 * letter case, or a name with escapes that might be it) is not found. */
int json_member_spans(const char *text, size_t len, struct json_span *spans, int n);

/* One member (json_member_spans with one): 0 when found exactly once,
 * with *start and *vlen; -1 otherwise. */
int json_member_span(const char *text, size_t len, const char *name, size_t *start,
                     size_t *vlen);

/* The value in text (len bytes, parsed already) copied without
 * whitespace and without every member called name, at any depth, and the
 * members called top_name (or none: NULL) of the outermost object: the
 * summary a list of runs keeps, without its samples, made from the bytes
 * it arrived as instead of a pruned tree printed again.  A NEW text, or
 * NULL where memory ran out or the answer could differ from pruning the
 * parsed tree (a member name written with escapes, a member dropped twice
 * from one object, text this scanner cannot follow): the caller prunes
 * the tree then. */
char *json_copy_without(const char *text, size_t len, const char *name, const char *top_name);

#endif
