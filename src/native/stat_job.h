/*
 * Stat of many paths, without following symlinks: what a capture asks of a
 * clean tracked file whose blob it has already read under another path
 * (src/repo/hash-pool.ts), to tell whether git's index still vouches for it.
 */
#ifndef WORKSNAP_STAT_JOB_H
#define WORKSNAP_STAT_JOB_H

#include "pool.h"

enum { STAT_FILE = 0, STAT_GONE = 1, STAT_DENIED = 2, STAT_ERROR = 3, STAT_OTHER = 4 };

/* Record layout, byte offsets. */
enum {
  SJ_STATUS = 0, /* u8: STAT_FILE for a regular file, STAT_OTHER for anything else that is there */
  SJ_EXEC = 1,   /* u8: any execute bit */
  SJ_ERRNO = 4,  /* i32 */
  SJ_SIZE = 8,   /* f64 */
  SJ_MTIME = 16, /* f64 ms */
  SJ_CTIME = 24, /* f64 ms */
  SJ_INO = 32,   /* f64 */
  STAT_RECORD = 40
};

/* Files of one directory looked at by one item at most. */
#define RUN_MAX 256

typedef struct {
  job_t base; /* base.count: the runs */
  size_t files;
  /* runs[k]..runs[k+1]: the files of run k */
  size_t *runs;
  uint8_t *records;
} stat_job_t;

void stat_job_run(job_t *job, size_t index, worker_t *w);

/* NULL when out of memory; `dirfd` is owned by the job from here on. */
stat_job_t *stat_job_new(const char *paths, size_t paths_len, size_t count, int dirfd);

#endif
