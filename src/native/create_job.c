/* Files created and written by the pool's threads (create_job.h). */
#include "create_job.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dirfd.h"
#include "files.h"
#include "slot_block.h"

#ifndef O_CLOEXEC
#define O_CLOEXEC 0
#endif

static void record(uint8_t *rec, int step, int err) {
  put_i32(rec, CJ_STEP, step);
  put_i32(rec, CJ_ERRNO, err);
}

void create_job_run(job_t *base, size_t index, worker_t *w) {
  (void)w;
  create_job_t *job = (create_job_t *)base;
  uint8_t *rec = job->records + index * CREATE_RECORD;
  const char *path = base->paths + base->offsets[index];
  uint64_t from = index == 0 ? 0 : job->ends[index - 1], to = job->ends[index];
  int fd = dirfd_create_beneath(base->dirfd, path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, job->mode);
  if (fd < 0) return record(rec, CREATE_OPEN, -fd);
  const uint8_t *p = job->data + from;
  size_t left = (size_t)(to - from);
  while (left > 0) {
    ssize_t n = write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = n < 0 ? errno : EIO;
      close(fd);
      return record(rec, CREATE_WRITE, err);
    }
    p += n;
    left -= (size_t)n;
  }
  /* a write-back error can surface only here on some file systems (NFS) */
  if (close(fd) != 0 && errno != EINTR) return record(rec, CREATE_CLOSE, errno);
  record(rec, CREATE_OK, 0);
}

static void create_destroy(job_t *base) {
  create_job_t *job = (create_job_t *)base;
  if (job->block) slot_block_release(job->block);
  else free((void *)job->data);
  free(job->ends);
  free(job->records);
  free(job);
}

create_job_t *create_job_new(const char *paths, size_t paths_len, size_t count, int dirfd, const uint8_t *data, size_t data_len, const double *ends, mode_t mode) {
  create_job_t *job = calloc(1, sizeof *job);
  if (!job) {
    close(dirfd);
    return NULL;
  }
  job->base.run = create_job_run;
  job->base.destroy = create_destroy;
  job->mode = mode;
  int ok = job_init(&job->base, paths, paths_len, count, dirfd);
  /* a gigabyte an import: borrowed where it lies when it can be, copied (and faulted in afresh) otherwise */
  job->block = data_len ? slot_block_borrow(data, data_len) : NULL;
  uint8_t *copy = job->block ? NULL : malloc(data_len ? data_len : 1);
  job->data = job->block ? data : copy;
  job->ends = malloc((count ? count : 1) * sizeof *job->ends);
  job->records = calloc(count ? count : 1, CREATE_RECORD);
  if (!ok || !job->data || !job->ends || !job->records) {
    job_discard(&job->base);
    return NULL;
  }
  if (copy) memcpy(copy, data, data_len);
  for (size_t i = 0; i < count; i++) job->ends[i] = (uint64_t)ends[i];
  return job;
}
