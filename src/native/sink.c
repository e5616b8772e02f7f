/* See sink.h. */
#define _GNU_SOURCE
#include "sink.h"

#include <fcntl.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "sha256.h"

/*
 * What is queued goes in batches. A batch holds up to BATCH_BYTES of copies (small pieces gathered in its own
 * memory) and up to BATCH_SEGMENTS runs in order, each either a run of those copies or a borrowed piece (memory
 * of the caller's, written from where it is and let go after: sink.h); the thread hashes the runs in order and
 * writes them with writev. A batch written is kept for the next bytes rather than freed: a gigabyte passing
 * through fresh memory was a page fault every 4 KiB on the producer's thread (215,000 of an export's 378,000
 * faults were its copies into new chunks). At most POOL_MAX are kept; the producer holds the queue near
 * QUEUE_MAX (atomic-stream.ts), so the pool rarely grows past that.
 */
#define BATCH_BYTES ((size_t)1 << 20)
#define BATCH_SEGMENTS 512
#define POOL_MAX 136

typedef struct {
  const uint8_t *data;
  size_t len;
  /* a borrowed piece: let go after it is written (or dropped); NULL for a run of the batch's copies */
  void (*release)(void *owner);
  void *owner;
} segment_t;

typedef struct batch {
  struct batch *next;
  /* bytes in all, and of copies */
  size_t len;
  size_t copied;
  size_t count;
  segment_t segments[BATCH_SEGMENTS];
  uint8_t data[];
} batch_t;

struct sink {
  int fd;
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t more;
  batch_t *head, *tail;
  /* batches written, to be filled again */
  batch_t *pool;
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
  /* the syncer (a regular file without durable_steps): its thread, and the bytes written when it last synced */
  pthread_t syncer;
  int has_syncer;
  pthread_cond_t sync_more;
  uint64_t synced;
};

/*
 * A file's bytes made durable behind its writes. The fsync that ends an export waited 250-770 ms for a gigabyte
 * written at about 350 MB/s, although writeback had been started every 8 MiB: the virtual disk here makes durable
 * only what a flush asks for, at about 2.4 ms a megabyte written since the last one (docs/decisions.md). Syncing
 * in the writer thread would stop its writes for as long; so a thread of its own runs fdatasync each time
 * SYNC_STEP more bytes have been written, while the writes go on, and the final fsync has only the bytes since
 * its last one left (about 40 ms). It waits on the disk, not the CPU: on a disk slower than the writes it lags
 * behind them and the final fsync waits for the rest, as before.
 */
#define SYNC_STEP ((uint64_t)32 << 20)

static void *syncer_main(void *arg) {
  sink_t *s = arg;
  pthread_mutex_lock(&s->mu);
  for (;;) {
    while (!s->closed && s->written - s->synced < SYNC_STEP) pthread_cond_wait(&s->sync_more, &s->mu);
    if (s->closed) break;
    uint64_t upto = s->written;
    pthread_mutex_unlock(&s->mu);
    (void)fdatasync(s->fd); /* only ahead of the final fsync, which reports any error */
    pthread_mutex_lock(&s->mu);
    s->synced = upto;
  }
  pthread_mutex_unlock(&s->mu);
  return NULL;
}

/* Waits for a pipe someone set non-blocking (a stdout the bundle streams into), which answers EAGAIN while full. */
static void wait_writable(int fd) {
  struct pollfd w = {.fd = fd, .events = POLLOUT};
  (void)poll(&w, 1, -1);
}

/* The iovecs written in order, through partial writes (they are changed); 0 or the errno. */
static int write_all(int fd, struct iovec *at, size_t n) {
  while (n > 0) {
    int cnt = n > IOV_MAX ? IOV_MAX : (int)n;
    ssize_t w = writev(fd, at, cnt);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        wait_writable(fd);
        continue;
      }
      return errno;
    }
    size_t done = (size_t)w;
    while (n > 0 && done >= at->iov_len) {
      done -= at->iov_len;
      at++;
      n--;
    }
    if (n > 0) {
      at->iov_base = (uint8_t *)at->iov_base + done;
      at->iov_len -= done;
    }
  }
  return 0;
}

/*
 * Bytes hashed and then written together: few enough that the write copies them from the cache the hash has just
 * read them into (a 50 MB piece hashed whole and then written had the write read it from memory again, and the
 * kernel's copy took twice as long).
 */
#define SLICE_BYTES ((size_t)256 << 10)

/* The segments hashed and written in order, a slice at a time; 0 or the errno. */
static int write_segments(sink_t *s, const segment_t *segs, size_t count) {
  struct iovec iov[BATCH_SEGMENTS];
  size_t n = 0, in_slice = 0;
  for (size_t i = 0; i < count; i++) {
    const uint8_t *p = segs[i].data;
    size_t len = segs[i].len;
    while (len > 0) {
      size_t take = SLICE_BYTES - in_slice < len ? SLICE_BYTES - in_slice : len;
      sha256_update(&s->ctx, p, take);
      iov[n].iov_base = (void *)p;
      iov[n].iov_len = take;
      n++;
      in_slice += take;
      p += take;
      len -= take;
      if (in_slice == SLICE_BYTES || n == BATCH_SEGMENTS) {
        int err = write_all(s->fd, iov, n);
        if (err) return err;
        n = 0;
        in_slice = 0;
      }
    }
  }
  return n > 0 ? write_all(s->fd, iov, n) : 0;
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

/* Lets go of the batch's borrowed pieces and empties it. */
static void batch_settle(batch_t *b) {
  for (size_t i = 0; i < b->count; i++) {
    if (b->segments[i].release) b->segments[i].release(b->segments[i].owner);
  }
  b->count = 0;
  b->len = 0;
  b->copied = 0;
}

static void *sink_main(void *arg) {
  sink_t *s = arg;
  for (;;) {
    pthread_mutex_lock(&s->mu);
    while (!s->head && !s->closed) pthread_cond_wait(&s->more, &s->mu);
    batch_t *b = s->head;
    if (!b) {
      pthread_mutex_unlock(&s->mu);
      break;
    }
    s->head = b->next;
    if (!s->head) s->tail = NULL;
    int failed = s->err;
    pthread_mutex_unlock(&s->mu);
    int err = 0;
    size_t len = b->len;
    if (!failed) {
      err = write_segments(s, b->segments, b->count);
      /* s->written is this thread's to change; reading it unlocked here is safe */
      if (!err) start_writeback(s, s->written + len);
    }
    batch_settle(b);
    pthread_mutex_lock(&s->mu);
    s->queued -= len;
    if (!failed && !err) s->written += len;
    if (s->has_syncer && s->written - s->synced >= SYNC_STEP) pthread_cond_signal(&s->sync_more);
    if (err && !s->err) s->err = err;
    int keep = s->pooled < POOL_MAX;
    if (keep) {
      b->next = s->pool;
      s->pool = b;
      s->pooled++;
    }
    pthread_mutex_unlock(&s->mu);
    if (!keep) free(b);
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
  pthread_cond_init(&s->sync_more, NULL);
  struct stat st;
  if (!durable_steps && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) s->has_syncer = pthread_create(&s->syncer, NULL, syncer_main, s) == 0;
  if (pthread_create(&s->thread, NULL, sink_main, s) != 0) {
    if (s->has_syncer) {
      sink_close(s);
      pthread_join(s->syncer, NULL);
    }
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->more);
    pthread_cond_destroy(&s->sync_more);
    free(s);
    return NULL;
  }
  return s;
}

/* A batch to fill: one written before, or a new one; NULL when out of memory. */
static batch_t *batch_take(sink_t *s) {
  pthread_mutex_lock(&s->mu);
  batch_t *b = s->pool;
  if (b) {
    s->pool = b->next;
    s->pooled--;
  }
  pthread_mutex_unlock(&s->mu);
  if (!b) b = malloc(sizeof *b + BATCH_BYTES);
  if (b) {
    b->next = NULL;
    b->len = 0;
    b->copied = 0;
    b->count = 0;
  }
  return b;
}

static void batch_submit(sink_t *s, batch_t *b, size_t *queued) {
  pthread_mutex_lock(&s->mu);
  if (s->tail) s->tail->next = b;
  else s->head = b;
  s->tail = b;
  s->queued += b->len;
  *queued = s->queued;
  pthread_cond_signal(&s->more);
  pthread_mutex_unlock(&s->mu);
}

/* The batch's last segment when it is a run of its copies that the next copy would extend; NULL otherwise. */
static segment_t *copies_run(batch_t *b) {
  segment_t *last = b->count ? &b->segments[b->count - 1] : NULL;
  return last && !last->release && last->data + last->len == b->data + b->copied ? last : NULL;
}

void sink_pieces_release(const sink_piece_t *pieces, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (pieces[i].release) pieces[i].release(pieces[i].owner);
  }
}

int sink_writev(sink_t *s, const sink_piece_t *pieces, size_t n, size_t *queued) {
  pthread_mutex_lock(&s->mu);
  *queued = s->queued;
  pthread_mutex_unlock(&s->mu);
  batch_t *b = NULL;
  for (size_t i = 0; i < n; i++) {
    const uint8_t *p = pieces[i].data;
    size_t len = pieces[i].len;
    if (pieces[i].release) {
      /* borrowed: a run of its own, written from where it is */
      if (b && b->count == BATCH_SEGMENTS) {
        batch_submit(s, b, queued);
        b = NULL;
      }
      if (!b && !(b = batch_take(s))) {
        sink_pieces_release(pieces + i, n - i);
        return 0;
      }
      b->segments[b->count++] = (segment_t){p, len, pieces[i].release, pieces[i].owner};
      b->len += len;
      continue;
    }
    while (len > 0) {
      /* no room for more copies, or for a new run of them (after a borrowed piece) */
      if (b && (b->copied == BATCH_BYTES || (!copies_run(b) && b->count == BATCH_SEGMENTS))) {
        batch_submit(s, b, queued);
        b = NULL;
      }
      if (!b && !(b = batch_take(s))) {
        sink_pieces_release(pieces + i + 1, n - i - 1);
        return 0;
      }
      size_t take = BATCH_BYTES - b->copied < len ? BATCH_BYTES - b->copied : len;
      uint8_t *to = b->data + b->copied;
      memcpy(to, p, take);
      segment_t *run = copies_run(b);
      if (run) run->len += take;
      else b->segments[b->count++] = (segment_t){to, take, NULL, NULL};
      b->copied += take;
      b->len += take;
      p += take;
      len -= take;
    }
  }
  if (b) {
    if (b->count > 0) batch_submit(s, b, queued);
    else free(b);
  }
  return 1;
}

void sink_close(sink_t *s) {
  pthread_mutex_lock(&s->mu);
  s->closed = 1;
  pthread_cond_signal(&s->more);
  pthread_cond_signal(&s->sync_more);
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
  pthread_cond_signal(&s->sync_more);
  pthread_mutex_unlock(&s->mu);
  pthread_join(s->thread, NULL);
  if (s->has_syncer) pthread_join(s->syncer, NULL);
  /* the thread has drained the queue (dropping what it held, its borrowed pieces let go) */
  while (s->head) {
    batch_t *b = s->head;
    s->head = b->next;
    batch_settle(b);
    free(b);
  }
  while (s->pool) {
    batch_t *b = s->pool;
    s->pool = b->next;
    free(b);
  }
  pthread_mutex_destroy(&s->mu);
  pthread_cond_destroy(&s->more);
  pthread_cond_destroy(&s->sync_more);
  free(s);
}
