/* See manifest_columns.h. */
#include "manifest_columns.h"

#include <stdlib.h>
#include <string.h>

static const char HEAD[] = "{\"entries\":[";
static const char BLOB[] = "{\"blob\":\"";
static const char MODE_EXEC[] = "\",\"mode\":\"100755\",\"path\":\"";
static const char MODE_LINK[] = "\",\"mode\":\"120000\",\"path\":\"";
static const char PATH[] = "\",\"path\":\"";
#define LIT(s) (sizeof(s) - 1)

static int at_literal(const uint8_t *p, const uint8_t *end, const char *lit, size_t n) { return (size_t)(end - p) >= n && memcmp(p, lit, n) == 0; }

static int hex_value(uint8_t c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

/* "sha256:" and 64 lowercase hex digits at p, as 32 bytes into `digest`; 0 when not. */
static int id_digest(const uint8_t *p, uint8_t digest[32]) {
  if (memcmp(p, "sha256:", 7) != 0) return 0;
  for (int i = 0; i < 32; i++) {
    int hi = hex_value(p[7 + 2 * i]), lo = hex_value(p[8 + 2 * i]);
    if (hi < 0 || lo < 0) return 0;
    digest[i] = (uint8_t)(hi << 4 | lo);
  }
  return 1;
}

/* Open addressing over 64-bit keys (the first 8 bytes of a digest); slots hold an index + 1, 0 for empty. */
typedef struct {
  uint32_t *slots;
  size_t mask;
} table_t;

static int table_init(table_t *t, size_t n) {
  size_t cap = 16;
  while (cap < 2 * n + 1) cap <<= 1;
  t->slots = calloc(cap, sizeof *t->slots);
  t->mask = cap - 1;
  return t->slots != NULL;
}

static uint64_t key_of(const uint8_t *digest) {
  uint64_t k;
  memcpy(&k, digest, 8);
  /* the bytes of a SHA-256 are uniform already; the multiply spreads the low bits the mask keeps */
  return k * 0x9e3779b97f4a7c15ull;
}

/* The slot holding `digest` (same() compares an occupant with it) or the empty slot where it would go. */
static uint32_t *table_find(table_t *t, const uint8_t *digest, int (*same)(void *, uint32_t, const uint8_t *), void *ctx) {
  size_t i = (size_t)(key_of(digest) >> 17) & t->mask;
  for (;;) {
    uint32_t *s = &t->slots[i];
    if (*s == 0 || same(ctx, *s - 1, digest)) return s;
    i = (i + 1) & t->mask;
  }
}

typedef struct {
  const uint8_t *text;
  const uint32_t *rows;
  /* the id looked up, as the text holds it */
  const uint8_t *id;
} entries_ctx_t;

/* Entry `at`'s blob id is the one looked up: compared as text, both being canonical. */
static int same_entry(void *ctx, uint32_t at, const uint8_t *digest) {
  (void)digest;
  entries_ctx_t *c = ctx;
  return memcmp(c->text + c->rows[(size_t)at * MANIFEST_ROW], c->id, MANIFEST_ID_BYTES) == 0;
}

int manifest_columns(const uint8_t *text, size_t len, manifest_columns_t *out) {
  memset(out, 0, sizeof *out);
  const uint8_t *p = text, *end = text + len;
  if (len > UINT32_MAX || !at_literal(p, end, HEAD, LIT(HEAD)) || len < LIT(HEAD) + 2 || memcmp(end - 2, "]}", 2) != 0) return 0;
  p += LIT(HEAD);
  end -= 2; /* the entries lie in [p, end) */
  /* an entry takes at least LIT(BLOB) + 71 + LIT(PATH) + 2 bytes: a bound for the arrays */
  size_t most = (size_t)(end - p) / (LIT(BLOB) + MANIFEST_ID_BYTES + LIT(PATH) + 2) + 1;
  out->rows = malloc(most * MANIFEST_ROW * sizeof *out->rows);
  out->modes = malloc(most);
  table_t seen = {0};
  int ok = out->rows && out->modes && table_init(&seen, most) ? 1 : -1;
  entries_ctx_t ctx = {text, out->rows, NULL};
  size_t n = 0;
  while (ok == 1 && p < end) {
    if (n > 0) {
      if (*p != ',') {
        ok = 0;
        break;
      }
      p++;
    }
    uint8_t digest[32];
    if (n == most || !at_literal(p, end, BLOB, LIT(BLOB)) || (size_t)(end - p) < LIT(BLOB) + MANIFEST_ID_BYTES || !id_digest(p + LIT(BLOB), digest)) {
      ok = 0;
      break;
    }
    p += LIT(BLOB);
    uint32_t *row = out->rows + n * MANIFEST_ROW;
    row[0] = (uint32_t)(p - text);
    p += MANIFEST_ID_BYTES;
    if (at_literal(p, end, PATH, LIT(PATH))) {
      out->modes[n] = MANIFEST_MODE_FILE;
      p += LIT(PATH);
    } else if (at_literal(p, end, MODE_EXEC, LIT(MODE_EXEC))) {
      out->modes[n] = MANIFEST_MODE_EXEC;
      p += LIT(MODE_EXEC);
    } else if (at_literal(p, end, MODE_LINK, LIT(MODE_LINK))) {
      out->modes[n] = MANIFEST_MODE_LINK;
      p += LIT(MODE_LINK);
    } else {
      ok = 0;
      break;
    }
    const uint8_t *from = p;
    while (p < end && *p != '"' && *p != '\\' && *p >= 0x20) p++;
    if ((size_t)(end - p) < 2 || p[0] != '"' || p[1] != '}') {
      ok = 0;
      break;
    }
    row[1] = (uint32_t)(from - text);
    row[2] = (uint32_t)(p - from);
    p += 2;
    ctx.id = text + row[0];
    uint32_t *slot = table_find(&seen, digest, same_entry, &ctx);
    if (*slot == 0) *slot = (uint32_t)n + 1;
    row[3] = *slot - 1;
    n++;
  }
  free(seen.slots);
  if (ok != 1) {
    manifest_columns_free(out);
    return ok;
  }
  out->count = n;
  return 1;
}

void manifest_columns_free(manifest_columns_t *c) {
  free(c->rows);
  free(c->modes);
  memset(c, 0, sizeof *c);
}

typedef struct {
  const uint8_t *records;
  size_t record_bytes, sha_at;
} records_ctx_t;

static int same_record(void *ctx, uint32_t at, const uint8_t *digest) {
  records_ctx_t *r = ctx;
  return memcmp(r->records + (size_t)at * r->record_bytes + r->sha_at, digest, 32) == 0;
}

int record_sizes(const uint8_t *records, size_t count, size_t record_bytes, size_t sha_at, size_t size_at, const uint8_t *ids, size_t n,
                 double *sizes) {
  table_t t;
  if (count > UINT32_MAX - 1 || !table_init(&t, count)) return -1;
  records_ctx_t ctx = {records, record_bytes, sha_at};
  for (size_t r = 0; r < count; r++) {
    uint32_t *slot = table_find(&t, records + r * record_bytes + sha_at, same_record, &ctx);
    *slot = (uint32_t)r + 1; /* the last record of a blob wins, as GitBlobMap's index keeps it */
  }
  for (size_t i = 0; i < n; i++) {
    uint8_t digest[32];
    sizes[i] = -2;
    if (!id_digest(ids + i * MANIFEST_ID_BYTES, digest)) continue;
    sizes[i] = -1;
    uint32_t *slot = table_find(&t, digest, same_record, &ctx);
    if (*slot) memcpy(&sizes[i], records + (size_t)(*slot - 1) * record_bytes + size_at, sizeof(double));
  }
  free(t.slots);
  return 0;
}
