/* See sha256_many.h. */
#include "sha256_many.h"

#include "sha256.h"

#include <pthread.h>

#define MAX_THREADS 16

typedef struct {
  const uint8_t *const *data;
  const size_t *len;
  size_t from, to;
  uint8_t *out;
} run_t;

static void *hash_run(void *arg) {
  const run_t *r = arg;
  for (size_t k = r->from; k < r->to; k++) {
    sha256_ctx c;
    sha256_init(&c);
    sha256_update(&c, r->data[k], r->len[k]);
    sha256_final(&c, r->out + 32 * k);
  }
  return NULL;
}

int sha256_many(const uint8_t *const *data, const size_t *len, size_t n, uint8_t *out, int threads) {
  if (threads > MAX_THREADS) threads = MAX_THREADS;
  if (threads < 1) threads = 1;
  size_t total = 0;
  for (size_t k = 0; k < n; k++) total += len[k];
  /* runs of consecutive buffers, each ending once it holds its share of the bytes */
  run_t runs[MAX_THREADS];
  int nruns = 0;
  size_t k = 0;
  for (int t = 0; t < threads && k < n; t++) {
    size_t share = (total + (size_t)threads - 1) / (size_t)threads, bytes = 0, from = k;
    while (k < n && (bytes < share || t == threads - 1)) bytes += len[k++];
    runs[nruns++] = (run_t){data, len, from, k, out};
  }
  pthread_t ids[MAX_THREADS];
  int started[MAX_THREADS] = {0}, failed = 0;
  for (int t = 1; t < nruns; t++) {
    started[t] = pthread_create(&ids[t], NULL, hash_run, &runs[t]) == 0;
    if (!started[t]) failed = 1;
  }
  if (nruns > 0) hash_run(&runs[0]);
  for (int t = 1; t < nruns; t++) {
    if (started[t]) pthread_join(ids[t], NULL);
    else hash_run(&runs[t]);
  }
  return failed ? -1 : 0;
}
