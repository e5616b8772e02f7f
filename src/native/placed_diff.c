/* See placed_diff.h. Each step mirrors the function of the same name in src/ops/diff/placed-diff.ts and line-offsets.ts. */
#include "placed_diff.h"

#include "search.h"

#include <stdlib.h>
#include <string.h>

#define NL '\n'
static const char NO_NEWLINE[] = "\\ No newline at end of file\n";

/* The offset exactly `n` lines after the line start `at`, or -1 when the buffer has fewer lines. */
static long long skip_lines(const uint8_t *buf, size_t len, size_t at, int64_t n) {
  if (n <= 0) return (long long)at;
  size_t left = (size_t)n;
  size_t p = at + after_nth(buf + at, len - at, NL, &left);
  if (left == 0) return (long long)p;
  /* a last line without newline is one more line, up to the end */
  return left == 1 && p < len ? (long long)len : -1;
}

/* Byte offset after `lines` more lines from the line start `at` (or the end). */
static size_t after_lines(const uint8_t *buf, size_t len, size_t at, int64_t lines) {
  if (lines <= 0) return at;
  size_t left = (size_t)lines;
  size_t p = at + after_nth(buf + at, len - at, NL, &left);
  return left == 0 ? p : len;
}

/* Byte offset `lines` lines before the line start `at` (or 0). */
static size_t before_lines(const uint8_t *buf, size_t at, int64_t lines) {
  size_t p = at;
  for (int64_t k = 0; k < lines && p > 0; k++) {
    if (p < 2) {
      p = 0;
      continue;
    }
    size_t q = p - 1; /* the last newline at or before p - 2 */
    while (q > 0 && buf[q - 1] != NL) q--;
    p = q;
  }
  return p;
}

/* Lines that end in buf[from, to). */
static int64_t count_lines(const uint8_t *buf, size_t from, size_t to) { return (int64_t)count_byte(buf + from, to - from, NL); }

/* Whether whole lines a[p, p2) are the same lines as b[q, q2) (placed-diff.ts sameLines). */
static int same_lines(const uint8_t *a, size_t p, size_t p2, const uint8_t *b, size_t blen, size_t q, size_t q2) {
  if (p2 == p) return 1;
  if (q2 > blen || memcmp(a + p, b + q, p2 - p) != 0) return 0;
  return a[p2 - 1] == NL || q2 == blen;
}

/* For change k, old bytes [at[4k], at[4k+1]) became new bytes [at[4k+2], at[4k+3]); 0 when the changes do not fit. */
static int place_changes(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen, const int32_t *c, size_t n, size_t *at) {
  int64_t i = 0, j = 0;
  size_t p = 0, q = 0;
  for (size_t k = 0; k < n; k++) {
    int64_t old_start = c[4 * k], old_end = c[4 * k + 1], new_start = c[4 * k + 2], new_end = c[4 * k + 3];
    int64_t same = old_start - i;
    if (same < 0 || new_start - j != same || old_end < old_start || new_end < new_start) return 0;
    long long p2 = skip_lines(a, alen, p, same);
    if (p2 < 0) return 0;
    size_t q2 = q + ((size_t)p2 - p);
    if (!same_lines(a, p, (size_t)p2, b, blen, q, q2)) return 0;
    long long p3 = skip_lines(a, alen, (size_t)p2, old_end - old_start);
    long long q3 = skip_lines(b, blen, q2, new_end - new_start);
    if (p3 < 0 || q3 < 0) return 0;
    at[4 * k] = (size_t)p2;
    at[4 * k + 1] = (size_t)p3;
    at[4 * k + 2] = q2;
    at[4 * k + 3] = (size_t)q3;
    p = (size_t)p3;
    q = (size_t)q3;
    i = old_end;
    j = new_end;
  }
  return alen - p == blen - q && memcmp(a + p, b + q, alen - p) == 0;
}

static int room(bytes_t *out, size_t n) { return bytes_reserve(out, n, 4096); }

static int put(bytes_t *out, const void *src, size_t n) {
  if (!room(out, n)) return 0;
  memcpy(out->bytes + out->len, src, n);
  out->len += n;
  return 1;
}

/* Whole lines src[from, to), each after `mark`; a last line without newline gets one and git's marker line. */
static int put_lines(bytes_t *out, uint8_t mark, const uint8_t *src, size_t from, size_t to) {
  /* at most one mark per byte, and one marker line */
  if (to > from && !room(out, 2 * (to - from) + sizeof NO_NEWLINE)) return 0;
  uint8_t *w = out->bytes + out->len;
  for (size_t p = from; p < to;) {
    const uint8_t *nl = memchr(src + p, NL, to - p);
    size_t end = nl ? (size_t)(nl - src) + 1 : to;
    *w++ = mark;
    memcpy(w, src + p, end - p);
    w += end - p;
    if (src[end - 1] != NL) {
      *w++ = NL;
      memcpy(w, NO_NEWLINE, sizeof NO_NEWLINE - 1);
      w += sizeof NO_NEWLINE - 1;
    }
    p = end;
  }
  out->len = (size_t)(w - out->bytes);
  return 1;
}

/* The decimal digits of v >= 0 at w; returns the end. */
static char *put_int(char *w, int64_t v) {
  char tmp[24];
  int n = 0;
  do tmp[n++] = (char)('0' + v % 10); while ((v /= 10) > 0);
  while (n > 0) *w++ = tmp[--n];
  return w;
}

/* unified.ts hunkRange: "start,count" in 1-based lines, git's way; returns the end. */
static char *hunk_range(char *w, int64_t start0, int64_t count) {
  if (count == 0) {
    w = put_int(w, start0);
    *w++ = ',';
    *w++ = '0';
    return w;
  }
  w = put_int(w, start0 + 1);
  if (count == 1) return w;
  *w++ = ',';
  return put_int(w, count);
}

int placed_diff(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen, const int32_t *c, size_t n,
                const uint8_t *head, size_t head_len, int32_t context, bytes_t *out) {
  if (n == 0) return 0;
  size_t *at = malloc(4 * n * sizeof *at);
  if (!at) return -1;
  int ok = place_changes(a, alen, b, blen, c, n, at);
  if (ok != 1) {
    free(at);
    return 0;
  }
  /* room for the usual diff at once: every byte of the changes' span marked, and each hunk's header and context */
  size_t guess = head_len + 2 * (at[4 * n - 1] - at[2]) + 512 * n;
  ok = room(out, guess < (1u << 20) ? guess : (1u << 20)) && put(out, head, head_len);
  for (size_t k = 0; ok && k < n;) {
    size_t e = k;
    while (e + 1 < n && (int64_t)c[4 * (e + 1)] - c[4 * e + 1] <= 2 * (int64_t)context) e++;
    const int32_t *first = c + 4 * k, *last = c + 4 * e;
    int64_t before = first[0] < context ? first[0] : context;
    size_t lo = before_lines(a, at[4 * k], before);
    size_t end = at[4 * e + 1];
    size_t hi = after_lines(a, alen, end, context);
    int64_t after = count_lines(a, end, hi) + (hi > end && a[hi - 1] != NL ? 1 : 0);
    int64_t old_lo = first[0] - before, new_lo = first[2] - before;
    char header[128], *w = header;
    memcpy(w, "@@ -", 4);
    w = hunk_range(w + 4, old_lo, last[1] + after - old_lo);
    memcpy(w, " +", 2);
    w = hunk_range(w + 2, new_lo, last[3] + after - new_lo);
    memcpy(w, " @@\n", 4);
    w += 4;
    ok = put(out, header, (size_t)(w - header)) && put_lines(out, ' ', a, lo, at[4 * k]);
    for (size_t m = k; ok && m <= e; m++) {
      ok = put_lines(out, '-', a, at[4 * m], at[4 * m + 1]) && put_lines(out, '+', b, at[4 * m + 2], at[4 * m + 3]) &&
           put_lines(out, ' ', a, at[4 * m + 1], m < e ? at[4 * (m + 1)] : hi);
    }
    k = e + 1;
  }
  free(at);
  return ok ? 1 : -1;
}
