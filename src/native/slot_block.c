/*
 * See slot_block.h. A window's block is written once by the reads and written out once by the bundle's writer,
 * then let go. Fresh memory is what costs here: each 4 KiB page of it a page fault, and on a paravirtualised
 * machine a trip through the hypervisor and a page zeroed; a block that holds one large file (up to 64 MiB) was
 * fresh memory every time. So a block of MAPPED_MIN bytes or more is mapped on its own, its size rounded up to a
 * grain (2 MiB up to GRAIN_STEP, 16 MiB above, so that the next window or large file fits in it), and asked to be
 * backed by huge pages where the kernel gives them on request (one fault per 2 MiB). While any job with slots is
 * open, such a block let go is kept as a spare (SPARE_MAX of them, SPARE_BYTES in all) and the next block that
 * fits in one takes it, its pages already there; when the last such job ends the spares are unmapped, so nothing
 * is held between exports. A smaller block comes from malloc, which reuses freed memory well at that size.
 */
#define _GNU_SOURCE
#include "slot_block.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define MAPPED_MIN ((size_t)2 << 20)
#define HUGE_PAGE ((size_t)2 << 20)
#define GRAIN_STEP ((size_t)16 << 20)
#define SPARE_MAX 6
#define SPARE_BYTES ((size_t)160 << 20)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static slot_block_t *spares[SPARE_MAX];
static size_t spare_count;
static size_t spare_bytes;
/* jobs with slots not yet ended */
static size_t slot_jobs;
/* blocks handed out and not yet let go by their last holder */
static slot_block_t *live;

static void block_free(slot_block_t *b) {
  if (b->mapped) munmap(b, b->mapped);
  else free(b);
}

void slot_job_opened(void) {
  pthread_mutex_lock(&lock);
  slot_jobs++;
  pthread_mutex_unlock(&lock);
}

void slot_job_ended(void) {
  slot_block_t *drop[SPARE_MAX];
  size_t n = 0;
  pthread_mutex_lock(&lock);
  if (--slot_jobs == 0) {
    n = spare_count;
    memcpy(drop, spares, n * sizeof *drop);
    spare_count = 0;
    spare_bytes = 0;
  }
  pthread_mutex_unlock(&lock);
  for (size_t i = 0; i < n; i++) block_free(drop[i]);
}

/* The smallest spare of at least `size` bytes mapped, taken out of the spares; NULL when none fits. Locked. */
static slot_block_t *spare_take(size_t size) {
  size_t best = spare_count;
  for (size_t i = 0; i < spare_count; i++) {
    if (spares[i]->mapped >= size && (best == spare_count || spares[i]->mapped < spares[best]->mapped)) best = i;
  }
  if (best == spare_count) return NULL;
  slot_block_t *b = spares[best];
  spares[best] = spares[--spare_count];
  spare_bytes -= b->mapped;
  return b;
}

/* `size` bytes mapped at a huge page's boundary (mapped one huge page over, the ends trimmed); NULL when refused. */
static slot_block_t *block_map(size_t size) {
  uint8_t *raw = mmap(NULL, size + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return NULL;
  uintptr_t at = ((uintptr_t)raw + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
  size_t head = at - (uintptr_t)raw;
  if (head) munmap(raw, head);
  if (HUGE_PAGE - head) munmap((uint8_t *)at + size, HUGE_PAGE - head);
#ifdef MADV_HUGEPAGE
  (void)madvise((void *)at, size, MADV_HUGEPAGE);
#endif
  slot_block_t *b = (slot_block_t *)at;
  b->mapped = size;
  return b;
}

slot_block_t *slot_block_new(size_t len) {
  size_t want = sizeof(slot_block_t) + (len ? len : 1);
  if (want < len) return NULL;
  slot_block_t *b = NULL;
  size_t size = 0;
  if (len >= MAPPED_MIN) {
    size_t grain = want <= GRAIN_STEP ? HUGE_PAGE : GRAIN_STEP;
    size = (want + grain - 1) / grain * grain;
    if (size < want) return NULL;
    pthread_mutex_lock(&lock);
    b = spare_take(size);
    pthread_mutex_unlock(&lock);
    if (!b) b = block_map(size);
  }
  if (!b) {
    b = malloc(want);
    if (!b) return NULL;
    b->mapped = 0;
  }
  atomic_init(&b->refs, 1);
  b->len = len;
  pthread_mutex_lock(&lock);
  b->prev = NULL;
  b->next = live;
  if (live) live->prev = b;
  live = b;
  pthread_mutex_unlock(&lock);
  return b;
}

void slot_block_release(slot_block_t *b) {
  if (!b || atomic_fetch_sub(&b->refs, 1) != 1) return;
  pthread_mutex_lock(&lock);
  if (b->prev) b->prev->next = b->next;
  else live = b->next;
  if (b->next) b->next->prev = b->prev;
  int keep = b->mapped && slot_jobs > 0 && spare_count < SPARE_MAX && spare_bytes + b->mapped <= SPARE_BYTES;
  if (keep) {
    spares[spare_count++] = b;
    spare_bytes += b->mapped;
  }
  pthread_mutex_unlock(&lock);
  if (!keep) block_free(b);
}

slot_block_t *slot_block_borrow(const void *data, size_t len) {
  const uint8_t *p = data;
  slot_block_t *found = NULL;
  pthread_mutex_lock(&lock);
  for (slot_block_t *b = live; b; b = b->next) {
    if (p >= b->data && p <= b->data + b->len && len <= (size_t)(b->data + b->len - p)) {
      /* a reference only while another is held: at zero the last holder is letting go (and waits to unlink it) */
      int refs = atomic_load(&b->refs);
      while (refs > 0 && !atomic_compare_exchange_weak(&b->refs, &refs, refs + 1)) {
      }
      if (refs > 0) found = b;
      break;
    }
  }
  pthread_mutex_unlock(&lock);
  return found;
}

void slot_block_spares(size_t *count, size_t *bytes) {
  pthread_mutex_lock(&lock);
  *count = spare_count;
  *bytes = spare_bytes;
  pthread_mutex_unlock(&lock);
}
