/*
 * Splits `git ls-files -s -v -z` output into records exactly as
 * splitIndexRecords does in TypeScript (src/repo/tree-scan.ts): records end
 * at a NUL; "<tag> <mode> <id> <stage>\t<path>" with the separators at their
 * usual places, or else found by search; a record without them all in order
 * is skipped. A record is plain when its tag is H, its stage 0, its mode
 * 100644 or 100755 and its id 40 digits long (SHA-1): the records
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
  /* an upper bound of the records: each ends at a NUL, or at the end */
  size_t cap = 1;
  for (const uint8_t *p = s, *end = s + len; p < end && (p = memchr(p, 0, (size_t)(end - p))); p++) cap++;
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
    int valid = tab > start && tab < end && sp1 > start && sp3 < len && sp2 < len && sp1 < len && sp3 > sp2 && sp3 < tab;
    if (valid) {
      int plain = sp1 - start == 1 && s[start] == 'H' && tab - sp3 == 2 && s[sp3 + 1] == '0' && sp2 - sp1 == 7 &&
                  (memcmp(s + sp1 + 1, "100644", 6) == 0 || memcmp(s + sp1 + 1, "100755", 6) == 0) && sp3 - sp2 == 41;
      if (plain) {
        const uint8_t *id = s + sp2 + 1;
        size_t slot = key_of(id) & (slots - 1);
        int32_t lead = -1;
        for (;;) {
          int32_t v = table[slot];
          if (v == 0) break;
          if (memcmp(ids[v - 1], id, 40) == 0) {
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

void listing_plan_free(listing_plan_t *plan) {
  free(plan->leader_of);
  free(plan->leader_plain);
  free(plan->paths);
  memset(plan, 0, sizeof *plan);
}
