/*
 * The paths come sorted, so those of one directory come together: each item
 * of the job is such a run, whose directory is opened once and whose files
 * are looked at by name, instead of every stat walking the whole path from
 * the root (deep trees: a tenth of a capture's kernel time went there).
 */
#include "stat_job.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"

static void fail(uint8_t *rec, int err) {
  rec[SJ_STATUS] = (err == ENOENT || err == ENOTDIR || err == ELOOP) ? STAT_GONE : (err == EACCES || err == EPERM) ? STAT_DENIED : STAT_ERROR;
  put_i32(rec, SJ_ERRNO, err);
}

/* The length of the directory part of `path` (0: the root), without its slash. */
static size_t dir_len(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? (size_t)(slash - path) : 0;
}

void stat_job_run(job_t *base, size_t run, worker_t *w) {
  (void)w;
  stat_job_t *job = (stat_job_t *)base;
  size_t from = job->runs[run], to = job->runs[run + 1];
  const char *first = base->paths + base->offsets[from];
  size_t dlen = dir_len(first);
  int dirfd = base->dirfd, opened = -1;
  if (dlen > 0 && to - from > 1) { /* one file alone: its whole path costs one walk, a directory open two */
    char *dir = strndup(first, dlen);
    if (dir) opened = openat(base->dirfd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(dir);
    /* a directory that cannot be opened: each file is looked at by its whole path, which says why */
    if (opened >= 0) dirfd = opened;
  }
  for (size_t i = from; i < to; i++) {
    uint8_t *rec = job->records + i * STAT_RECORD;
    const char *path = base->paths + base->offsets[i];
    const char *name = opened >= 0 ? path + dlen + 1 : path;
    struct stat st;
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      fail(rec, errno);
      continue;
    }
    rec[SJ_STATUS] = S_ISREG(st.st_mode) ? STAT_FILE : STAT_OTHER;
    rec[SJ_EXEC] = (st.st_mode & 0111) ? 1 : 0;
    put_f64(rec, SJ_SIZE, (double)st.st_size);
    put_f64(rec, SJ_MTIME, stat_ms(ST_MTIME(st)));
    put_f64(rec, SJ_CTIME, stat_ms(ST_CTIME(st)));
    put_f64(rec, SJ_INO, (double)st.st_ino);
  }
  if (opened >= 0) close(opened);
}

static void stat_destroy(job_t *base) {
  stat_job_t *job = (stat_job_t *)base;
  free(job->records);
  free(job->runs);
  free(job);
}

stat_job_t *stat_job_new(const char *paths, size_t paths_len, size_t count, int dirfd) {
  stat_job_t *job = calloc(1, sizeof *job);
  if (!job) return NULL;
  job->base.run = stat_job_run;
  job->base.destroy = stat_destroy;
  job->files = count;
  int ok = job_init(&job->base, paths, paths_len, count, dirfd);
  job->records = calloc(count ? count : 1, STAT_RECORD);
  job->runs = malloc((count + 1) * sizeof *job->runs);
  if (!ok || !job->records || !job->runs) {
    job_discard(&job->base);
    return NULL;
  }
  /* runs of paths in one directory, at most RUN_MAX long so both threads share a large directory */
  size_t runs = 0;
  for (size_t i = 0; i < count; i++) {
    if (i > 0 && i - job->runs[runs - 1] < RUN_MAX) {
      const char *a = job->base.paths + job->base.offsets[i - 1], *b = job->base.paths + job->base.offsets[i];
      size_t la = dir_len(a);
      if (la == dir_len(b) && strncmp(a, b, la) == 0) continue;
    }
    job->runs[runs++] = i;
  }
  job->runs[runs] = count;
  job->base.count = runs; /* the pool's items are the runs; job->files records */
  return job;
}
