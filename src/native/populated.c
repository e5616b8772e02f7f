/* See populated.h. */
#include "populated.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define POPULATED_MAGIC 0x706f70756c617465ull /* "populate" */

struct populated {
  uint64_t magic;
  atomic_size_t refs;
  uint8_t *base;
  size_t size;
};

static size_t page_size(void) {
  long p = sysconf(_SC_PAGESIZE);
  return p > 0 ? (size_t)p : 4096;
}

static populated_t *populated_new(size_t size) {
  populated_t *b = malloc(sizeof *b);
  if (!b) return NULL;
  size_t page = page_size();
  size = (size + page - 1) / page * page;
  int flags = MAP_PRIVATE | MAP_ANONYMOUS;
#ifdef MAP_POPULATE
  flags |= MAP_POPULATE;
#endif
  void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, flags, -1, 0);
  if (p == MAP_FAILED) {
    free(b);
    return NULL;
  }
  b->magic = POPULATED_MAGIC;
  atomic_init(&b->refs, 1);
  b->base = p;
  b->size = size;
  return b;
}

void populated_release(populated_t *b) {
  if (!b || atomic_fetch_sub(&b->refs, 1) != 1) return;
  munmap(b->base, b->size);
  b->magic = 0;
  free(b);
}

void populated_retain(populated_t *b) { atomic_fetch_add(&b->refs, 1); }

int populated_holds(const populated_t *b, const void *at, size_t len) {
  const uint8_t *p = at;
  return b->magic == POPULATED_MAGIC && p >= b->base && len <= b->size && (size_t)(p - b->base) <= b->size - len;
}

uint8_t *carve(carver_t *c, size_t size, populated_t **owner) {
  size_t need = (size + 7) & ~(size_t)7;
  if (!c->block || c->block->size - c->used < need) {
    size_t want = c->next;
    if (need > want) want = need;
    populated_t *b = populated_new(want);
    if (!b) return NULL;
    if (need <= c->most) {
      /* the new block becomes the carver's; the one before goes when its arrays do */
      populated_release(c->block);
      c->block = b;
      c->used = 0;
      if (c->next < c->most) c->next = c->next * 2 < c->most ? c->next * 2 : c->most;
    } else {
      /* one large array: a block of its own, the carver's kept for the smaller ones */
      *owner = b;
      return b->base;
    }
  }
  uint8_t *at = c->block->base + c->used;
  c->used += need;
  atomic_fetch_add(&c->block->refs, 1);
  *owner = c->block;
  return at;
}

void carve_shrink(carver_t *c, populated_t *owner, uint8_t *at, size_t size, size_t used) {
  size_t was = (size + 7) & ~(size_t)7, now = (used + 7) & ~(size_t)7;
  /* only the last carve of the carver's own block (a large array's block of its own is left as it is) */
  if (owner == c->block && c->block && now <= was && at + was == c->block->base + c->used) c->used -= was - now;
}

void carver_done(carver_t *c) {
  populated_release(c->block);
  c->block = NULL;
}
