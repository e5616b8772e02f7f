/* See patch_hunks.h. Each step mirrors the TypeScript function of the same name (parse-hunk.ts, match.ts, apply.ts). */
#include "patch_hunks.h"

#include "search.h"

#include <stdlib.h>
#include <string.h>

#define SPACE ' '
#define PLUS '+'
#define MINUS '-'
#define BACKSLASH '\\'

/* Line j of the patch: where it starts and how long it is without its "\n". */
typedef struct {
  const uint8_t *at;
  size_t len;
} line_t;

static inline line_t line_of(const uint8_t *p, const uint32_t *starts, size_t j) {
  size_t s = starts[j], e = starts[j + 1];
  if (e > s && p[e - 1] == '\n') e--;
  return (line_t){p + s, e - s};
}

/* The line's first byte, an empty line read as a context line (an editor stripped its space). */
static inline int kind_of(line_t l) { return l.len == 0 ? SPACE : l.at[0]; }

static inline int starts_with(line_t l, const char *s, size_t slen) { return l.len >= slen && memcmp(l.at, s, slen) == 0; }

static inline int is_diff_line(line_t l) {
  if (l.len == 0) return 0;
  int c = l.at[0];
  return c == SPACE || c == PLUS || c == MINUS || c == BACKSLASH;
}

/* isFileStart: "diff --git ", or "--- " directly followed by "+++ ". */
static int is_file_start(const uint8_t *p, const uint32_t *starts, size_t n, size_t j) {
  line_t l = line_of(p, starts, j);
  if (starts_with(l, "diff --git ", 11)) return 1;
  return starts_with(l, "--- ", 4) && j + 1 < n && starts_with(line_of(p, starts, j + 1), "+++ ", 4);
}

/* isSignature: git format-patch's "-- " not followed by a diff line. */
static int is_signature(const uint8_t *p, const uint32_t *starts, size_t n, size_t j) {
  line_t l = line_of(p, starts, j);
  return l.len == 3 && memcmp(l.at, "-- ", 3) == 0 && (j + 1 >= n || !is_diff_line(line_of(p, starts, j + 1)));
}

/* isHunkHeader */
static int is_hunk_header(line_t l) {
  return starts_with(l, "@@ ", 3) || (l.len == 2 && memcmp(l.at, "@@", 2) == 0) || (l.len == 3 && memcmp(l.at, "@@\r", 3) == 0);
}

/* One to nine digits at *k (the header's \d{1,9}: a longer run fails the whole header). */
static int number_at(line_t l, size_t *k, int32_t *v) {
  size_t at = *k;
  int32_t x = 0;
  while (at < l.len && l.at[at] >= '0' && l.at[at] <= '9') {
    if (at - *k == 9) return 0;
    x = x * 10 + (l.at[at] - '0');
    at++;
  }
  if (at == *k) return 0;
  *k = at;
  *v = x;
  return 1;
}

static int literal_at(line_t l, size_t *k, const char *s, size_t slen) {
  if (l.len - *k < slen || memcmp(l.at + *k, s, slen) != 0) return 0;
  *k += slen;
  return 1;
}

/* HEADER: /^@@ -(\d{1,9})(?:,(\d{1,9}))? \+(\d{1,9})(?:,(\d{1,9}))? @@/ on the line without a final "\r". */
static int header_numbers(line_t l, int32_t v[4]) {
  if (l.len > 0 && l.at[l.len - 1] == '\r') l.len--;
  size_t k = 0;
  if (!literal_at(l, &k, "@@ -", 4) || !number_at(l, &k, &v[0])) return 0;
  v[1] = 1;
  if (k < l.len && l.at[k] == ',' && (k++, !number_at(l, &k, &v[1]))) return 0;
  if (!literal_at(l, &k, " +", 2) || !number_at(l, &k, &v[2])) return 0;
  v[3] = 1;
  if (k < l.len && l.at[k] == ',' && (k++, !number_at(l, &k, &v[3]))) return 0;
  return literal_at(l, &k, " @@", 3);
}

/* countedBodyEnd: the body the header counts give, the way git reads it; -1 when they do not fit. */
static long long counted_body_end(const uint8_t *p, const uint32_t *starts, size_t n, size_t i, int32_t old_count, int32_t new_count) {
  size_t j = i;
  int32_t olds = 0, news = 0;
  while (olds < old_count || news < new_count) {
    if (j >= n) return -1;
    int c = kind_of(line_of(p, starts, j));
    if (c == SPACE) {
      if (olds >= old_count || news >= new_count) return -1;
      olds++;
      news++;
    } else if (c == MINUS) {
      if (olds >= old_count) return -1;
      olds++;
    } else if (c == PLUS) {
      if (news >= new_count) return -1;
      news++;
    } else if (c != BACKSLASH) return -1;
    j++;
  }
  if (j < n) {
    line_t l = line_of(p, starts, j);
    if (l.len > 0 && l.at[0] == BACKSLASH) j++;
  }
  return (long long)j;
}

/* Whether diffRunEnd(end) > end: after empty lines, a diff line that starts neither a file nor a signature. */
static int run_goes_on(const uint8_t *p, const uint32_t *starts, size_t n, size_t end) {
  size_t k = end;
  while (k < n && line_of(p, starts, k).len == 0) k++;
  return k < n && is_diff_line(line_of(p, starts, k)) && !is_file_start(p, starts, n, k) && !is_signature(p, starts, n, k);
}

/* toHunkLines' checks: a "\" line follows a line, nothing follows a side's line without newline; some line. */
static int body_well_formed(const uint8_t *p, const uint32_t *starts, size_t from, size_t to) {
  int prev = 0, old_closed = 0, new_closed = 0;
  for (size_t j = from; j < to; j++) {
    int c = kind_of(line_of(p, starts, j));
    if (c == BACKSLASH) {
      if (!prev) return 0;
      if (prev != PLUS) old_closed = 1;
      if (prev != MINUS) new_closed = 1;
      continue;
    }
    if ((c != PLUS && old_closed) || (c != MINUS && new_closed)) return 0;
    prev = c;
  }
  return prev != 0;
}

size_t patch_hunks(const uint8_t *p, const uint32_t *starts, size_t n, int32_t *out) {
  size_t found = 0;
  for (size_t i = 0; i < n; i++) {
    line_t l = line_of(p, starts, i);
    if (!is_hunk_header(l)) continue;
    int32_t v[4];
    if (!header_numbers(l, v)) continue;
    long long end = counted_body_end(p, starts, n, i + 1, v[1], v[3]);
    if (end < 0 || end > INT32_MAX || run_goes_on(p, starts, n, (size_t)end) || !body_well_formed(p, starts, i + 1, (size_t)end)) continue;
    int32_t *r = out + HUNK_FIELDS * found++;
    r[0] = (int32_t)i;
    r[1] = v[0];
    r[2] = v[1];
    r[3] = v[2];
    r[4] = v[3];
    r[5] = (int32_t)end;
  }
  return found;
}

/* A file as lines: its bytes and line starts (a last line without newline is a line). */
typedef struct {
  const uint8_t *bytes;
  const uint32_t *starts;
  int64_t count;
} file_t;

/* A hunk's body lines [from, to) in the patch, and how many of them are old (context or removed). */
typedef struct {
  const uint8_t *p;
  const uint32_t *starts;
  size_t from, to;
  int64_t old;
} body_t;

/* Whether the patch line `l` (a context or removed line: its text after the first byte) is file line i, "\n" included (equalsText). */
static inline int same_as_file_line(const file_t *f, int64_t i, line_t l) {
  size_t text = l.len == 0 ? 0 : l.len - 1;
  size_t s = f->starts[i], e = f->starts[i + 1];
  if (e - s != text + 1 || f->bytes[e - 1] != '\n') return 0;
  return text == 0 || memcmp(f->bytes + s, l.at + 1, text) == 0;
}

/* fits: the old side is the file's lines from `start` on. */
static int fits(const file_t *f, const body_t *b, int64_t start) {
  if (start < 0 || start + b->old > f->count) return 0;
  int64_t i = start;
  for (size_t j = b->from; j < b->to; j++) {
    line_t l = line_of(b->p, b->starts, j);
    if (kind_of(l) == PLUS) continue;
    if (!same_as_file_line(f, i++, l)) return 0;
  }
  return 1;
}

/*
 * place and nearest: the stated line, else the nearest match at or after
 * min_start, the earlier on a tie; -1 when there is none. Only distances
 * with a candidate on either side are visited, so a stated line far outside
 * the file costs nothing.
 */
static int64_t place(const file_t *f, const body_t *b, int64_t p0, int64_t min_start) {
  if (p0 >= min_start && fits(f, b, p0)) return p0;
  int64_t first = min_start > 0 ? min_start : 0, last = f->count - b->old;
  if (first > last) return -1;
  int64_t d0 = p0 > last ? p0 - last : p0 < first ? first - p0 : 1;
  int64_t d1 = p0 - first > last - p0 ? p0 - first : last - p0;
  for (int64_t d = d0; d <= d1; d++) {
    int64_t lo = p0 - d, hi = p0 + d;
    if (lo >= first && lo <= last && fits(f, b, lo)) return lo;
    if (hi >= first && hi <= last && fits(f, b, hi)) return hi;
  }
  return -1;
}

/* sameLine of two body lines that both end with a newline: the same text. */
static inline int same_text(line_t a, line_t b) {
  size_t la = a.len == 0 ? 0 : a.len - 1, lb = b.len == 0 ? 0 : b.len - 1;
  return la == lb && (la == 0 || memcmp(a.at + 1, b.at + 1, la) == 0);
}

/* Appends quadruples to plan->changes (room for one per body line); ok 0 when a number leaves int32. */
static void push_change(patch_place_t *plan, int64_t a, int64_t b, int64_t c, int64_t d, int *ok) {
  if (d > INT32_MAX || b > INT32_MAX) *ok = 0;
  int32_t *q = plan->changes + 4 * plan->nchanges++;
  q[0] = (int32_t)a;
  q[1] = (int32_t)b;
  q[2] = (int32_t)c;
  q[3] = (int32_t)d;
}

/*
 * hunkChanges: each run of removed and added lines between context lines,
 * less the lines it removes and adds back unchanged at its ends. `run` has
 * room for the body's lines. Returns the new delta.
 */
static int64_t hunk_changes(const body_t *b, int64_t old_at, int64_t new_at, size_t *run, patch_place_t *plan, int *ok) {
  int64_t i = old_at, j = new_at;
  size_t k = b->from;
  while (k < b->to) {
    if (kind_of(line_of(b->p, b->starts, k)) == SPACE) {
      i++;
      j++;
      k++;
      continue;
    }
    /* removed lines' patch line numbers first, then the added ones' */
    size_t r = 0, a = 0, from = k;
    for (; k < b->to && kind_of(line_of(b->p, b->starts, k)) != SPACE; k++) r += kind_of(line_of(b->p, b->starts, k)) == MINUS;
    size_t *removed = run, *added = run + r;
    size_t ri = 0;
    for (size_t x = from; x < k; x++) {
      if (kind_of(line_of(b->p, b->starts, x)) == MINUS) removed[ri++] = x;
      else added[a++] = x;
    }
    size_t head = 0, tail = 0;
    while (head < r && head < a && same_text(line_of(b->p, b->starts, removed[head]), line_of(b->p, b->starts, added[head]))) head++;
    while (tail < r - head && tail < a - head &&
           same_text(line_of(b->p, b->starts, removed[r - 1 - tail]), line_of(b->p, b->starts, added[a - 1 - tail])))
      tail++;
    if (head + tail < r || head + tail < a) push_change(plan, i + (int64_t)head, i + (int64_t)(r - tail), j + (int64_t)head, j + (int64_t)(a - tail), ok);
    i += (int64_t)r;
    j += (int64_t)a;
  }
  return j - i;
}

void patch_place_free(patch_place_t *plan) {
  free(plan->start);
  free(plan->changes);
  free(plan->file_starts);
  memset(plan, 0, sizeof *plan);
}

int patch_place(const uint8_t *file, size_t flen, const uint8_t *p, const uint32_t *starts, size_t n, const int32_t *spec, size_t hunks,
                patch_place_t *plan) {
  memset(plan, 0, sizeof *plan);
  if (flen >= UINT32_MAX || hunks == 0) return 0;
  size_t lines = line_count(file, flen);
  if (lines > INT32_MAX) return 0;
  size_t body_lines = 0, longest = 0;
  for (size_t h = 0; h < hunks; h++) {
    int32_t from = spec[3 * h], to = spec[3 * h + 1];
    if (from < 0 || to < from || (size_t)to > n) return 0;
    size_t len = (size_t)(to - from);
    body_lines += len;
    if (len > longest) longest = len;
  }
  plan->hunks = hunks;
  plan->start = malloc(3 * hunks * sizeof(int64_t));
  plan->changes = malloc((body_lines + 1) * 4 * sizeof(int32_t));
  plan->file_starts = malloc((lines + 1) * sizeof(uint32_t));
  size_t *run = malloc((longest + 1) * sizeof(size_t));
  if (!plan->start || !plan->changes || !plan->file_starts || !run) {
    free(run);
    patch_place_free(plan);
    return -1;
  }
  plan->end = plan->start + hunks;
  plan->offset = plan->end + hunks;
  line_starts(file, flen, lines, plan->file_starts);
  file_t f = {file, plan->file_starts, (int64_t)lines};

  int ok = 1;
  int64_t min_start = 0, delta = 0;
  int64_t size = (int64_t)flen;
  for (size_t h = 0; h < hunks && ok; h++) {
    body_t b = {p, starts, (size_t)spec[3 * h], (size_t)spec[3 * h + 1], 0};
    int64_t added = 0;
    for (size_t j = b.from; j < b.to; j++) {
      line_t l = line_of(p, starts, j);
      int c = kind_of(l);
      if (c != SPACE && c != MINUS && c != PLUS) ok = 0; /* "\ No newline at end of file": the TypeScript path */
      if (c != PLUS) b.old++;
      if (c != MINUS) added += l.len == 0 ? 1 : (int64_t)l.len;
    }
    int64_t stated = spec[3 * h + 2];
    int64_t p0 = stated > 0 ? stated - 1 : 0;
    /* an insertion (no old line) has rules of its own: match.ts placeInsertion */
    int64_t at = ok && b.old > 0 ? place(&f, &b, p0, min_start) : -1;
    if (at < 0) {
      ok = 0;
      break;
    }
    plan->start[h] = at;
    plan->end[h] = at + b.old;
    plan->offset[h] = at - p0;
    delta = hunk_changes(&b, at, at + delta, run, plan, &ok);
    size += added - (int64_t)(f.starts[at + b.old] - f.starts[at]);
    min_start = at + b.old;
  }
  free(run);
  if (!ok || size > (int64_t)UINT32_MAX) {
    patch_place_free(plan);
    return 0;
  }
  plan->new_size = (size_t)size;
  return 1;
}

void patch_splice(const patch_place_t *plan, const uint8_t *file, size_t flen, const uint8_t *p, const uint32_t *starts, const int32_t *spec,
                  uint8_t *out) {
  size_t from = 0, at = 0;
  for (size_t h = 0; h < plan->hunks; h++) {
    size_t until = plan->file_starts[plan->start[h]];
    memcpy(out + at, file + from, until - from);
    at += until - from;
    for (size_t j = (size_t)spec[3 * h]; j < (size_t)spec[3 * h + 1]; j++) {
      line_t l = line_of(p, starts, j);
      if (kind_of(l) == MINUS) continue;
      if (l.len > 1) {
        memcpy(out + at, l.at + 1, l.len - 1);
        at += l.len - 1;
      }
      out[at++] = '\n';
    }
    from = plan->file_starts[plan->end[h]];
  }
  memcpy(out + at, file + from, flen - from);
}
