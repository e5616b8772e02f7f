/* See patch_many.h. */
#include "patch_many.h"

#include "sha256.h"

#include <pthread.h>
#include <stdatomic.h>

#define MAX_THREADS 16

typedef struct {
  patch_item_t *items;
  size_t count;
  const patch_text_t *patch;
  int splice;
  atomic_size_t next;
} shared_t;

static void digest(const uint8_t *data, size_t len, uint8_t out[32]) {
  sha256_ctx c;
  sha256_init(&c);
  sha256_update(&c, data, len);
  sha256_final(&c, out);
}

static void place_one(patch_item_t *it, const patch_text_t *t) {
  it->placed = patch_place(it->file, it->flen, t->p, t->starts, t->n, it->spec, it->hunks, &it->plan);
  if (!it->old_known) digest(it->file, it->flen, it->old_digest);
}

static void splice_one(patch_item_t *it, const patch_text_t *t) {
  if (it->placed != 1) return;
  if (it->plan.new_size > 0) patch_splice(&it->plan, it->file, it->flen, t->p, t->starts, it->spec, it->out);
  digest(it->out, it->plan.new_size, it->new_digest);
  patch_place_free(&it->plan);
}

static void *run(void *arg) {
  shared_t *s = arg;
  for (size_t k; (k = atomic_fetch_add(&s->next, 1)) < s->count;) {
    if (s->splice) splice_one(&s->items[k], s->patch);
    else place_one(&s->items[k], s->patch);
  }
  return NULL;
}

static void run_all(patch_item_t *items, size_t count, const patch_text_t *patch, int threads, int splice) {
  shared_t s = {items, count, patch, splice, 0};
  if (threads > MAX_THREADS) threads = MAX_THREADS;
  if ((size_t)threads > count) threads = (int)count;
  pthread_t ids[MAX_THREADS];
  int started = 0;
  /* a thread that cannot start leaves its share to the others (the caller's run takes every item left) */
  for (int t = 1; t < threads; t++) started += pthread_create(&ids[started], NULL, run, &s) == 0;
  run(&s);
  for (int t = 0; t < started; t++) pthread_join(ids[t], NULL);
}

void patch_many_place(patch_item_t *items, size_t count, const patch_text_t *patch, int threads) {
  run_all(items, count, patch, threads, 0);
}

void patch_many_splice(patch_item_t *items, size_t count, const patch_text_t *patch, int threads) {
  run_all(items, count, patch, threads, 1);
}
