#include "json_strings.h"

#include <stdlib.h>
#include <string.h>

/*
 * Eight bytes at a time: the bytes of a word that end a run of plain string
 * bytes (a quote, a backslash, a control character, and a byte from 0x80 on
 * when `high` asks for those too), as their top bits.
 */
#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL
static inline uint64_t word_stops(uint64_t w, int high) {
  uint64_t quote = w ^ (ONES * '"'), slash = w ^ (ONES * '\\');
  uint64_t hits = ((quote - ONES) & ~quote) | ((slash - ONES) & ~slash) | ((w - ONES * 0x20) & ~w);
  return (hits | (high ? w : 0)) & HIGHS;
}

/*
 * The first byte from `p` on that ends a plain run, or `end`. The lowest bit
 * word_stops sets is always a true stop (a borrow only marks bytes above a
 * true one), so on a little-endian machine it tells where; elsewhere the word
 * is looked at byte by byte.
 */
static const uint8_t *plain_run(const uint8_t *p, const uint8_t *end, int high) {
  while (end - p >= 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    uint64_t m = word_stops(w, high);
    if (m) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
      return p + (__builtin_ctzll(m) >> 3);
#else
      break;
#endif
    }
    p += 8;
  }
  while (p < end && *p != '"' && *p != '\\' && *p >= 0x20 && (!high || *p < 0x80)) p++;
  return p;
}

static int hex_digit(uint8_t c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* The four hex digits at p as a code unit, or -1. */
static long hex4(const uint8_t *p) {
  long v = 0;
  for (int i = 0; i < 4; i++) {
    int d = hex_digit(p[i]);
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

/* Length of the well-formed UTF-8 sequence at p (RFC 3629: no overlongs, no surrogates, at most U+10FFFF), or 0. */
static size_t utf8_sequence(const uint8_t *p, const uint8_t *end) {
  uint8_t c = p[0];
  size_t n = end - p;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return n >= 2 && (p[1] & 0xC0) == 0x80 ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (n < 3 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80) return 0;
    if (c == 0xE0 && p[1] < 0xA0) return 0; /* overlong */
    if (c == 0xED && p[1] >= 0xA0) return 0; /* a surrogate */
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (n < 4 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80) return 0;
    if (c == 0xF0 && p[1] < 0x90) return 0; /* overlong */
    if (c == 0xF4 && p[1] >= 0x90) return 0; /* past U+10FFFF */
    return 4;
  }
  return 0;
}

static size_t put_utf8(uint8_t *o, unsigned long cp) {
  if (cp < 0x80) {
    o[0] = (uint8_t)cp;
    return 1;
  }
  if (cp < 0x800) {
    o[0] = (uint8_t)(0xC0 | cp >> 6);
    o[1] = (uint8_t)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    o[0] = (uint8_t)(0xE0 | cp >> 12);
    o[1] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
    o[2] = (uint8_t)(0x80 | (cp & 0x3F));
    return 3;
  }
  o[0] = (uint8_t)(0xF0 | cp >> 18);
  o[1] = (uint8_t)(0x80 | (cp >> 12 & 0x3F));
  o[2] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
  o[3] = (uint8_t)(0x80 | (cp & 0x3F));
  return 4;
}

/*
 * The end of the string whose opening quote is at `open` (one past its
 * closing quote), with whether its value is ASCII; 0 when it is not a JSON
 * string (left open, a raw control character, an escape JSON does not have)
 * or not one this can decode as JSON.parse would (a lone surrogate escape,
 * bytes that are not UTF-8).
 */
static size_t string_scan(const uint8_t *text, size_t len, size_t open, int *ascii) {
  const uint8_t *p = text + open + 1, *end = text + len;
  int high = 0;
  for (;;) {
    p = plain_run(p, end, 1);
    if (p == end) return 0;
    uint8_t c = *p;
    if (c == '"') break;
    if (c < 0x20) return 0;
    if (c >= 0x80) {
      size_t k = utf8_sequence(p, end);
      if (k == 0) return 0;
      high = 1;
      p += k;
      continue;
    }
    if (end - p < 2) return 0;
    switch (p[1]) {
    case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
      p += 2;
      break;
    case 'u': {
      long cp = end - p >= 6 ? hex4(p + 2) : -1;
      if (cp < 0 || (cp >= 0xDC00 && cp <= 0xDFFF)) return 0;
      p += 6;
      if (cp >= 0xD800 && cp <= 0xDBFF) {
        long low = end - p >= 6 && p[0] == '\\' && p[1] == 'u' ? hex4(p + 2) : -1;
        if (low < 0xDC00 || low > 0xDFFF) return 0;
        p += 6;
      }
      if (cp >= 0x80) high = 1;
      break;
    }
    default:
      return 0;
    }
  }
  *ascii = !high;
  return p + 1 - text;
}

static int is_space(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

int json_long_strings(const uint8_t *text, size_t len, size_t min_raw, json_span_t *out) {
  int found = 0;
  size_t i = 0;
  for (;;) {
    const uint8_t *q = i < len ? memchr(text + i, '"', len - i) : NULL;
    if (!q) return found;
    int ascii;
    size_t open = q - text, close = string_scan(text, len, open, &ascii);
    if (close == 0) return -1;
    i = close;
    if (close - open < min_raw) continue;
    size_t k = close;
    while (k < len && is_space(text[k])) k++;
    if (k < len && text[k] == ':') return -1; /* a key */
    if (found == JSON_STRINGS_MAX) return -1;
    out[found++] = (json_span_t){open, close, ascii};
  }
}

size_t json_decode_span(uint8_t *text, const json_span_t *s) {
  const uint8_t *p = text + s->start + 1, *end = text + s->end - 1;
  uint8_t *o = text + s->start;
  while (p < end) {
    if (*p != '\\') {
      /* a found span's body stops a run at a backslash only; a quote or control byte is one no found span holds */
      const uint8_t *run = p;
      while ((p = plain_run(p, end, 0)) < end && *p != '\\') p++;
      memmove(o, run, p - run);
      o += p - run;
      continue;
    }
    uint8_t e = end - p >= 2 ? p[1] : '\\';
    p += 2;
    switch (e) {
    case 'b': *o++ = '\b'; break;
    case 'f': *o++ = '\f'; break;
    case 'n': *o++ = '\n'; break;
    case 'r': *o++ = '\r'; break;
    case 't': *o++ = '\t'; break;
    case 'u': {
      long cp = end - p >= 4 ? hex4(p) : -1;
      if (cp < 0) return o - (text + s->start); /* not a span json_long_strings found: stop */
      p += 4;
      if (cp >= 0xD800 && cp <= 0xDBFF && end - p >= 6 && p[0] == '\\' && p[1] == 'u') {
        long low = hex4(p + 2);
        if (low >= 0xDC00 && low <= 0xDFFF) {
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          p += 6;
        }
      }
      /* every escape is at least as long as what it stands for: \uXXXX (6) gives at most 3 bytes, a pair (12) 4 */
      o += put_utf8(o, (unsigned long)cp);
      break;
    }
    default: *o++ = e; break; /* " \ / */
    }
  }
  return o - (text + s->start);
}

size_t utf8_to_utf16(const uint8_t *s, size_t len, uint16_t *out) {
  size_t i = 0, o = 0;
  while (i < len) {
    uint32_t c = s[i];
    if (c < 0x80) {
      out[o++] = (uint16_t)c;
      i++;
      continue;
    }
    size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
    if (i + n > len) break; /* cannot happen for checked text: stop rather than read past it */
    c = n == 2 ? c & 0x1F : n == 3 ? c & 0x0F : c & 0x07;
    for (size_t k = 1; k < n; k++) c = (c << 6) | (s[i + k] & 0x3F);
    i += n;
    if (c >= 0x10000) {
      c -= 0x10000;
      out[o++] = (uint16_t)(0xD800 + (c >> 10));
      out[o++] = (uint16_t)(0xDC00 + (c & 0x3FF));
    } else {
      out[o++] = (uint16_t)c;
    }
  }
  return o;
}
