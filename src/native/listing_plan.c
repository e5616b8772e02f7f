/*
 * Splits `git ls-files -s -v -z` output into records exactly as
 * splitIndexRecords does in TypeScript (src/repo/tree-scan.ts): records end
 * at a NUL; "<tag> <mode> <id> <stage>\t<path>" with the separators at their
 * usual places, or else found by search; a record without them all in order
 * is skipped. A record is plain when its tag is H, its stage 0, its mode
 * 100644 or 100755 and its id 40 digits long (SHA-1) or 64 (SHA-256), as
 * long as the listing's first plain record's (one repository, one object
 * format): the records
 * plainIndexItems keeps, before it drops names that are not UTF-8 or are
 * reserved, which the TypeScript side matches by position (prehash.ts). The
 * first plain record of each id leads it; its path goes to the hash job, and
 * every other plain record of the id follows it (blob-followers.ts).
 */
#include "listing_plan.h"

#include <stdlib.h>
#include <string.h>

/* the byte at i, or -1 past the end (charCodeAt's NaN) */
static int at(const uint8_t *s, size_t len, size_t i) { return i < len ? s[i] : -1; }

/* the first `c` in s[from, to), or `to` */
static size_t find(const uint8_t *s, size_t from, size_t to, uint8_t c) {
  const uint8_t *p = from < to ? memchr(s + from, c, to - from) : NULL;
  return p ? (size_t)(p - s) : to;
}

/* a record's separators: "<tag> <mode> <id> <stage>\t<path>" */
typedef struct {
  size_t sp1, sp2, sp3, tab;
  /* every separator found, in order, before the record's end */
  int valid;
} record_t;

/* The record starting at `start`: its separators, and where it ends (its NUL, or the listing's end). */
static size_t split_record(const uint8_t *s, size_t len, size_t start, record_t *r) {
  size_t end = find(s, start, len, 0);
  size_t sp1 = start + 1, sp2 = start + 8, sp3 = start + 49, tab = start + 51;
  int found = at(s, len, sp1) == ' ' && at(s, len, sp2) == ' ' &&
              ((at(s, len, sp3) == ' ' && at(s, len, tab) == '\t') || (at(s, len, (sp3 = start + 73)) == ' ' && at(s, len, (tab = start + 75)) == '\t'));
  if (!found) {
    /* as indexOf from the record's start: a separator past its end fails the checks below */
    tab = find(s, start, len, '\t');
    sp1 = find(s, start, len, ' ');
    sp2 = sp1 < len ? find(s, sp1 + 1, len, ' ') : len;
    sp3 = sp2 < len ? find(s, sp2 + 1, len, ' ') : len;
  }
  r->sp1 = sp1;
  r->sp2 = sp2;
  r->sp3 = sp3;
  r->tab = tab;
  r->valid = tab > start && tab < end && sp1 > start && sp3 < len && sp2 < len && sp1 < len && sp3 > sp2 && sp3 < tab;
  return end;
}

/* An upper bound of a listing's records: each ends at a NUL, or at the end. */
static size_t records_at_most(const uint8_t *s, size_t len) {
  size_t n = 1;
  for (const uint8_t *p = s, *end = s + len; p < end && (p = memchr(p, 0, (size_t)(end - p))); p++) n++;
  return n;
}

static uint32_t key_of(const uint8_t *id) {
  uint32_t h = 0;
  for (int i = 0; i < 8; i++) {
    uint8_t c = id[i];
    h = (h << 4) | (uint32_t)(c <= '9' ? c - '0' : (c | 32) - 'a' + 10);
  }
  return h * 2654435761u;
}

int listing_plan(const uint8_t *s, size_t len, listing_plan_t *out) {
  memset(out, 0, sizeof *out);
  size_t cap = records_at_most(s, len);
  size_t slots = 16;
  while (slots < 2 * cap) slots <<= 1;
  /* per slot: the leader's position + 1 (0: empty) */
  int32_t *table = calloc(slots, sizeof *table);
  const uint8_t **ids = malloc(cap * sizeof *ids);
  out->leader_of = malloc(cap * sizeof *out->leader_of);
  out->leader_plain = malloc(cap * sizeof *out->leader_plain);
  out->paths = malloc(len + 1);
  if (!table || !ids || !out->leader_of || !out->leader_plain || !out->paths) {
    free(table);
    free(ids);
    listing_plan_free(out);
    return 0;
  }
  size_t start = 0;
  while (start < len) {
    record_t r;
    size_t end = split_record(s, len, start, &r);
    size_t sp1 = r.sp1, sp2 = r.sp2, sp3 = r.sp3, tab = r.tab;
    if (r.valid) {
      int plain = sp1 - start == 1 && s[start] == 'H' && tab - sp3 == 2 && s[sp3 + 1] == '0' && sp2 - sp1 == 7 &&
                  (memcmp(s + sp1 + 1, "100644", 6) == 0 || memcmp(s + sp1 + 1, "100755", 6) == 0) &&
                  (out->id_hex ? sp3 - sp2 - 1 == out->id_hex : sp3 - sp2 == 41 || sp3 - sp2 == 65);
      if (plain) {
        out->id_hex = sp3 - sp2 - 1;
        const uint8_t *id = s + sp2 + 1;
        size_t slot = key_of(id) & (slots - 1);
        int32_t lead = -1;
        for (;;) {
          int32_t v = table[slot];
          if (v == 0) break;
          if (memcmp(ids[v - 1], id, out->id_hex) == 0) {
            lead = v - 1;
            break;
          }
          slot = (slot + 1) & (slots - 1);
        }
        if (lead < 0) {
          lead = (int32_t)out->leaders++;
          table[slot] = lead + 1;
          ids[lead] = id;
          out->leader_plain[lead] = (int32_t)out->plain;
          size_t n = end - tab - 1;
          memcpy(out->paths + out->paths_len, s + tab + 1, n);
          out->paths_len += n;
          out->paths[out->paths_len++] = 0;
        }
        out->leader_of[out->plain++] = lead;
      }
    }
    start = end + 1;
  }
  free(table);
  free(ids);
  return 1;
}

/*
 * Whether an ASCII name can fold to a reserved one (.git, .mcp) as mayFoldToReserved
 * (src/core/repo-path.ts) decides for a name starting with ".", "g" or "m": it starts, with each
 * byte taken | 0x20 as there, with ".git", ".mcp", "git~1" or "mcp~1".
 */
static int may_fold(const uint8_t *g, size_t n) {
#define LOW(i) ((i) < n ? (g[i] | 0x20) : -1)
  int c0 = LOW(0);
  if (c0 == '.') return (LOW(1) == 'g' && LOW(2) == 'i' && LOW(3) == 't') || (LOW(1) == 'm' && LOW(2) == 'c' && LOW(3) == 'p');
  if (c0 == 'g') return LOW(1) == 'i' && LOW(2) == 't' && LOW(3) == '~' && LOW(4) == '1';
  if (c0 == 'm') return LOW(1) == 'c' && LOW(2) == 'p' && LOW(3) == '~' && LOW(4) == '1';
  return 0;
#undef LOW
}

/*
 * LR_NON_ASCII for a path with a byte of 0x80 or more; else LR_MAY_BE_RESERVED when a name of it may fold.
 * p[0, from) is a directory (ending with '/', or empty) known to be neither: only the rest is looked at.
 * *dir_len: the length of the path's directory with its last '/' (0 without one).
 */
static int32_t path_flags(const uint8_t *p, size_t n, size_t from, size_t *dir_len) {
  int32_t flags = 0;
  size_t seg = from;
  *dir_len = from;
  for (size_t i = from; i <= n; i++) {
    if (i < n) {
      if (p[i] >= 0x80) return LR_NON_ASCII;
      if (p[i] != '/') continue;
    }
    if (may_fold(p + seg, i - seg)) flags = LR_MAY_BE_RESERVED;
    if (i < n) *dir_len = seg = i + 1;
  }
  return flags;
}

int listing_records(const uint8_t *s, size_t len, int32_t **out, size_t *count) {
  *out = NULL;
  *count = 0;
  if (len >= INT32_MAX) return -1;
  size_t cap = records_at_most(s, len);
  int32_t *v = malloc(cap * LR_FIELDS * sizeof *v);
  if (!v) return 0;
  size_t n = 0, start = 0;
  /* the last path's directory, when nothing in it was flagged: a path under it is looked at past it only
   * (a listing is in path order, so most paths share their directory with the one before) */
  const uint8_t *clear = NULL;
  size_t clear_len = 0;
  while (start < len) {
    record_t r;
    size_t end = split_record(s, len, start, &r);
    if (r.valid) {
      const uint8_t *path = s + r.tab + 1;
      size_t path_len = end - r.tab - 1, dir_len;
      size_t from = clear && clear_len <= path_len && memcmp(path, clear, clear_len) == 0 ? clear_len : 0;
      int32_t flags = path_flags(path, path_len, from, &dir_len);
      clear = flags == 0 ? path : NULL;
      clear_len = flags == 0 ? dir_len : 0;
      int32_t *f = v + n++ * LR_FIELDS;
      f[0] = (int32_t)start;
      f[1] = (int32_t)r.sp1;
      f[2] = (int32_t)r.sp2;
      f[3] = (int32_t)r.sp3;
      f[4] = (int32_t)r.tab;
      f[5] = (int32_t)end;
      f[6] = flags;
    }
    start = end + 1;
  }
  *out = v;
  *count = n;
  return 1;
}

void listing_plan_free(listing_plan_t *plan) {
  free(plan->leader_of);
  free(plan->leader_plain);
  free(plan->paths);
  memset(plan, 0, sizeof *plan);
}
