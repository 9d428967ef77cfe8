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

/* The value of member name (plain ASCII) of the object in text (len
 * bytes): its first byte at *start, *vlen bytes long.  0 when found
 * exactly once, -1 otherwise (absent, ambiguous, or not an object). */
int json_member_span(const char *text, size_t len, const char *name, size_t *start,
                     size_t *vlen);

#endif
