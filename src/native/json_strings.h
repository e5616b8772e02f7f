/*
 * The long string values of a JSON text, found and decoded without parsing
 * the rest: a JSON-RPC request carrying a patch or a file is one long string
 * in a few dozen bytes of structure, and a JSON parser builds a string with
 * many escapes (a patch's every line ends in "\n") character by character.
 */
#ifndef WORKSNAP_JSON_STRINGS_H
#define WORKSNAP_JSON_STRINGS_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
  size_t start, end; /* the opening quote and one past the closing quote, in the text */
  int ascii;         /* the decoded value is ASCII */
} json_span_t;

#define JSON_STRINGS_MAX 64

/*
 * The string literals of `text` whose source is at least `min_raw` bytes
 * long, in order, into `out` (at most JSON_STRINGS_MAX): their count, or -1
 * when the text is not one this can vouch for: a string left open, a raw
 * control character or a bad escape in a string, a lone surrogate escape or
 * bytes that are not UTF-8 in any string, a long string used as an object
 * key, more long strings than fit. The text is only read; on -1 the caller
 * parses it as it is (its parser gives the error the text deserves).
 */
int json_long_strings(const uint8_t *text, size_t len, size_t min_raw, json_span_t *out);

/*
 * Span `s` (one json_long_strings found in this text) decoded to UTF-8 in
 * place, from its opening quote on (the decoded bytes are never more than
 * the source): their length. The text's bytes in the span are overwritten;
 * those outside it are not touched. Any other span stays within its bounds.
 */
size_t json_decode_span(uint8_t *text, const json_span_t *s);

/*
 * Valid UTF-8 (a decoded span: json_long_strings checked it) as UTF-16 code units into `out` (room for `len`
 * units: never more units than bytes): how many.
 */
size_t utf8_to_utf16(const uint8_t *s, size_t len, uint16_t *out);

#endif
