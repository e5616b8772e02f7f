#include "files.h"

#include <errno.h>
#include <fcntl.h>
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

double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return stat_ms(t);
}
