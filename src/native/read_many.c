/* See read_many.h. */
#include "read_many.h"

#include "files.h"
#include "sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#define MAX_THREADS 16

typedef struct {
  read_item_t *items;
  size_t n;
  int flags;
  int populate;
  atomic_size_t next;
  atomic_int out_of_memory;
} shared_t;

int read_fd_to_end(int fd, size_t size, uint8_t **data, size_t *len) {
  uint8_t *buf;
  size_t n;
  int r = read_sized(fd, size, &buf, &n);
  if (r < 0) return r;
  /* longer than fstat said: read on, doubling the buffer */
  for (size_t cap = n; r == 1;) {
    if (n == cap) {
      uint8_t *grown = realloc(buf, cap * 2);
      if (!grown) {
        free(buf);
        return -ENOMEM;
      }
      buf = grown;
      cap *= 2;
    }
    ssize_t got = pread_again(fd, buf + n, cap - n, (off_t)n);
    if (got < 0) {
      free(buf);
      return (int)got;
    }
    if (got == 0) break;
    n += (size_t)got;
  }
  *data = buf;
  *len = n;
  return 0;
}

/* Blocks of 64 KiB doubling to 2 MiB: a few files do not populate much more than they take. */
#define CARVE_FIRST (64u << 10)
#define CARVE_MOST (2u << 20)

/*
 * read_fd_to_end into bytes carved from `c` (the expected size and one more, as read_sized reads), *owner their
 * block; a file longer than its fstat said is read whole by read_fd_to_end instead (*owner NULL). 1 when carving
 * failed (nothing read), else read_fd_to_end's answer.
 */
static int read_carved(int fd, size_t size, carver_t *c, uint8_t **data, size_t *len, populated_t **owner) {
  uint8_t *buf = carve(c, size + 1, owner);
  if (!buf) return 1;
  size_t n = 0;
  while (n < size + 1) {
    ssize_t got = pread_again(fd, buf + n, size + 1 - n, (off_t)n);
    if (got < 0) {
      populated_release(*owner);
      *owner = NULL;
      return (int)got;
    }
    if (got == 0) break;
    n += (size_t)got;
  }
  if (n == size + 1) {
    /* it grew since the fstat: read whole into a buffer of its own */
    populated_release(*owner);
    *owner = NULL;
    return read_fd_to_end(fd, size, data, len);
  }
  carve_shrink(c, *owner, buf, size + 1, n);
  *data = buf;
  *len = n;
  return 0;
}

int read_fd_populated(int fd, size_t size, uint8_t **data, size_t *len, populated_t **owner) {
  carver_t c = carver_new(size + 1, size + 1);
  *owner = NULL;
  int r = read_carved(fd, size, &c, data, len, owner);
  carver_done(&c);
  return r == 1 ? read_fd_to_end(fd, size, data, len) : r;
}

static void read_one(read_item_t *it, int flags, carver_t *c) {
  if (fstatat(it->dirfd, it->name, &it->lstat, AT_SYMLINK_NOFOLLOW) != 0) {
    it->lstat_err = errno;
    return;
  }
  if (!S_ISREG(it->lstat.st_mode)) return;
  int fd;
  do fd = openat(it->dirfd, it->name, flags | O_CLOEXEC, 0);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    it->read_err = errno;
    return;
  }
  if (fstat(fd, &it->fstat) != 0) it->read_err = -errno;
  else {
    it->opened = 1;
    if (S_ISREG(it->fstat.st_mode)) {
      int r = c ? read_carved(fd, (size_t)it->fstat.st_size, c, &it->data, &it->len, &it->owner) : 1;
      it->read_err = r == 1 ? read_fd_to_end(fd, (size_t)it->fstat.st_size, &it->data, &it->len) : r;
    }
  }
  close(fd);
}

static void *run(void *arg) {
  shared_t *s = arg;
  carver_t c = carver_new(CARVE_FIRST, CARVE_MOST);
  for (size_t k; (k = atomic_fetch_add(&s->next, 1)) < s->n;) {
    read_item_t *it = &s->items[k];
    read_one(it, s->flags, s->populate ? &c : NULL);
    if (it->read_err == -ENOMEM) atomic_store(&s->out_of_memory, 1);
    if (it->data) {
      sha256_ctx h;
      sha256_init(&h);
      sha256_update(&h, it->data, it->len);
      sha256_final(&h, it->digest);
    }
  }
  carver_done(&c);
  return NULL;
}

int read_many(read_item_t *items, size_t n, int flags, int threads, int populate) {
  if (threads > MAX_THREADS) threads = MAX_THREADS;
  if (threads < 1) threads = 1;
  if ((size_t)threads > n) threads = n > 0 ? (int)n : 1;
  shared_t s = {items, n, flags, populate, 0, 0};
  for (size_t k = 0; k < n; k++) {
    items[k].lstat_err = items[k].read_err = items[k].opened = 0;
    items[k].data = NULL;
    items[k].len = 0;
    items[k].owner = NULL;
  }
  pthread_t ids[MAX_THREADS];
  int started[MAX_THREADS] = {0};
  for (int t = 1; t < threads; t++) started[t] = pthread_create(&ids[t], NULL, run, &s) == 0;
  run(&s);
  for (int t = 1; t < threads; t++)
    if (started[t]) pthread_join(ids[t], NULL);
  return atomic_load(&s.out_of_memory) ? -1 : 0;
}
