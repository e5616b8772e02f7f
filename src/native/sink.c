/* See sink.h. */
#define _GNU_SOURCE
#include "sink.h"

#include <fcntl.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sha256.h"

/*
 * Every chunk holds up to CHUNK_BYTES, and a chunk written is kept for the next bytes rather than freed: a
 * gigabyte passing through fresh chunks was a page fault every 4 KiB on the producer's thread (215,000 of an
 * export's 378,000 faults were its copies into new chunks). At most POOL_MAX are kept; the producer holds the
 * queue near QUEUE_MAX (atomic-stream.ts), so the pool rarely grows past that.
 */
#define CHUNK_BYTES ((size_t)1 << 20)
#define POOL_MAX 136

typedef struct chunk {
  struct chunk *next;
  size_t len;
  uint8_t data[];
} chunk_t;

struct sink {
  int fd;
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t more;
  chunk_t *head, *tail;
  /* chunks written, to be filled again */
  chunk_t *pool;
  size_t pooled;
  size_t queued;
  int closed;
  int done;
  int err;
  uint64_t written;
  /* bytes handed to writeback already (sync_file_range): the final fsync waits only for the rest */
  uint64_t started;
  uint64_t step;
  /* each step synced (fdatasync) rather than only handed to writeback */
  int durable_steps;
  sha256_ctx ctx;
  uint8_t digest[32];
};

/* A pipe someone set non-blocking (a stdout the bundle streams into) answers EAGAIN while full: wait for its reader. */
static int write_all(int fd, const uint8_t *p, size_t len) {
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        struct pollfd w = {.fd = fd, .events = POLLOUT};
        (void)poll(&w, 1, -1);
        continue;
      }
      return errno;
    }
    p += n;
    len -= (size_t)n;
  }
  return 0;
}

/* Writeback is started every this many bytes by default, so the data goes to the disk while the file is still being made. */
#define WRITEBACK_STEP ((uint64_t)8 << 20)

/* Only hints: an error here leaves the work to the final fsync. */
static void start_writeback(sink_t *s, uint64_t upto) {
  if (upto - s->started < s->step) return;
  if (s->durable_steps) {
    /*
     * Each step made durable as it goes: a disk that writes what an fsync asks for only then (a virtual disk
     * whose host caches it) spends about 2.4 ms a megabyte in the final fsync however early the writeback was
     * started; synced a step at a time beside the producer, the final one waits for the last step only.
     */
#ifdef __linux__
    (void)fdatasync(s->fd);
#else
    (void)fsync(s->fd);
#endif
  } else {
#ifdef SYNC_FILE_RANGE_WRITE
    (void)sync_file_range(s->fd, (off64_t)s->started, (off64_t)(upto - s->started), SYNC_FILE_RANGE_WRITE);
#endif
  }
  s->started = upto;
}

static void *sink_main(void *arg) {
  sink_t *s = arg;
  for (;;) {
    pthread_mutex_lock(&s->mu);
    while (!s->head && !s->closed) pthread_cond_wait(&s->more, &s->mu);
    chunk_t *c = s->head;
    if (!c) {
      pthread_mutex_unlock(&s->mu);
      break;
    }
    s->head = c->next;
    if (!s->head) s->tail = NULL;
    int failed = s->err;
    pthread_mutex_unlock(&s->mu);
    int err = 0;
    if (!failed) {
      sha256_update(&s->ctx, c->data, c->len);
      err = write_all(s->fd, c->data, c->len);
      /* s->written is this thread's to change; reading it unlocked here is safe */
      if (!err) start_writeback(s, s->written + c->len);
    }
    pthread_mutex_lock(&s->mu);
    s->queued -= c->len;
    if (!failed && !err) s->written += c->len;
    if (err && !s->err) s->err = err;
    int keep = s->pooled < POOL_MAX;
    if (keep) {
      c->next = s->pool;
      s->pool = c;
      s->pooled++;
    }
    pthread_mutex_unlock(&s->mu);
    if (!keep) free(c);
  }
  uint8_t digest[32];
  sha256_final(&s->ctx, digest);
  pthread_mutex_lock(&s->mu);
  memcpy(s->digest, digest, 32);
  s->done = 1;
  pthread_mutex_unlock(&s->mu);
  return NULL;
}

sink_t *sink_open(int fd, const void *prefix, size_t prefix_len, uint64_t writeback_step, int durable_steps) {
  sink_t *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->fd = fd;
  s->step = writeback_step ? writeback_step : WRITEBACK_STEP;
  s->durable_steps = durable_steps;
  sha256_init(&s->ctx);
  if (prefix_len > 0) sha256_update(&s->ctx, prefix, prefix_len);
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->more, NULL);
  if (pthread_create(&s->thread, NULL, sink_main, s) != 0) {
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->more);
    free(s);
    return NULL;
  }
  return s;
}

/* A chunk to fill: one written before, or a new one; NULL when out of memory. */
static chunk_t *chunk_take(sink_t *s) {
  pthread_mutex_lock(&s->mu);
  chunk_t *c = s->pool;
  if (c) {
    s->pool = c->next;
    s->pooled--;
  }
  pthread_mutex_unlock(&s->mu);
  if (!c) c = malloc(sizeof *c + CHUNK_BYTES);
  if (c) {
    c->next = NULL;
    c->len = 0;
  }
  return c;
}

static void chunk_submit(sink_t *s, chunk_t *c, size_t *queued) {
  pthread_mutex_lock(&s->mu);
  if (s->tail) s->tail->next = c;
  else s->head = c;
  s->tail = c;
  s->queued += c->len;
  *queued = s->queued;
  pthread_cond_signal(&s->more);
  pthread_mutex_unlock(&s->mu);
}

int sink_writev(sink_t *s, const sink_piece_t *pieces, size_t n, size_t *queued) {
  pthread_mutex_lock(&s->mu);
  *queued = s->queued;
  pthread_mutex_unlock(&s->mu);
  chunk_t *c = NULL;
  for (size_t i = 0; i < n; i++) {
    const uint8_t *p = pieces[i].data;
    size_t len = pieces[i].len;
    while (len > 0) {
      if (!c && !(c = chunk_take(s))) return 0;
      size_t take = CHUNK_BYTES - c->len < len ? CHUNK_BYTES - c->len : len;
      memcpy(c->data + c->len, p, take);
      c->len += take;
      p += take;
      len -= take;
      if (c->len == CHUNK_BYTES) {
        chunk_submit(s, c, queued);
        c = NULL;
      }
    }
  }
  if (c) chunk_submit(s, c, queued);
  return 1;
}

int sink_write(sink_t *s, const void *data, size_t len, size_t *queued) {
  sink_piece_t one = {data, len};
  return sink_writev(s, &one, 1, queued);
}

void sink_close(sink_t *s) {
  pthread_mutex_lock(&s->mu);
  s->closed = 1;
  pthread_cond_signal(&s->more);
  pthread_mutex_unlock(&s->mu);
}

int sink_done(sink_t *s, int *err, uint64_t *written, uint8_t digest[32]) {
  pthread_mutex_lock(&s->mu);
  int done = s->done;
  if (done) {
    *err = s->err;
    *written = s->written;
    memcpy(digest, s->digest, 32);
  }
  pthread_mutex_unlock(&s->mu);
  return done;
}

size_t sink_queued(sink_t *s) {
  pthread_mutex_lock(&s->mu);
  size_t q = s->queued;
  pthread_mutex_unlock(&s->mu);
  return q;
}

void sink_free(sink_t *s) {
  pthread_mutex_lock(&s->mu);
  s->closed = 1;
  s->err = s->err ? s->err : ECANCELED; /* what is still queued is dropped */
  pthread_cond_signal(&s->more);
  pthread_mutex_unlock(&s->mu);
  pthread_join(s->thread, NULL);
  while (s->head) {
    chunk_t *c = s->head;
    s->head = c->next;
    free(c);
  }
  while (s->pool) {
    chunk_t *c = s->pool;
    s->pool = c->next;
    free(c);
  }
  pthread_mutex_destroy(&s->mu);
  pthread_cond_destroy(&s->more);
  free(s);
}
