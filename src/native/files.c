#include "files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int open_item(job_t *job, size_t index) {
  return openat(job->dirfd, job->paths + job->offsets[index], O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
}

long long read_upto(int fd, worker_t *w, size_t limit, long long expect) {
  size_t len = 0;
  if (expect >= 0 && (size_t)expect < limit && !worker_reserve(w, (size_t)expect + 1)) {
    errno = ENOMEM;
    return -1;
  }
  for (;;) {
    if (len == w->cap) {
      if (len > limit) return (long long)len;
      size_t want = w->cap ? w->cap * 2 : 1 << 20;
      if (want > limit + 1) want = limit + 1;
      if (want <= len) want = len + 1;
      if (!worker_reserve(w, want)) {
        errno = ENOMEM;
        return -1;
      }
    }
    size_t asked = w->cap - len;
    /* pread, not read: on a FIFO or socket it fails (ESPIPE) without taking bytes meant for someone else */
    ssize_t got = pread(fd, w->buf + len, asked, (off_t)len);
    if (got < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (got == 0) return (long long)len;
    len += (size_t)got;
    if (len > limit) return (long long)len;
    if (expect >= 0 && (size_t)got < asked && len >= (size_t)expect) return (long long)len;
  }
}

ssize_t pread_again(int fd, void *buf, size_t len, off_t offset) {
  ssize_t got;
  do got = pread(fd, buf, len, offset);
  while (got < 0 && errno == EINTR);
  return got < 0 ? -errno : got;
}

int read_sized(int fd, size_t size, uint8_t **data, size_t *len) {
  uint8_t *buf = malloc(size + 1);
  if (!buf) return -ENOMEM;
  size_t n = 0;
  while (n < size + 1) {
    ssize_t got = pread_again(fd, buf + n, size + 1 - n, (off_t)n);
    if (got < 0) {
      free(buf);
      return (int)got;
    }
    if (got == 0) break;
    n += (size_t)got;
  }
  *data = buf;
  *len = n;
  return n == size + 1 ? 1 : 0;
}

double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return stat_ms(t);
}
