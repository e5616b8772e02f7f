/*
 * The capture's hot path: clean tracked files read and hashed with SHA-256,
 * and with git's blob hash (SHA-1 or SHA-256, the repository's object format)
 * unless the file is trusted to hold its index blob (see hash_job.c). One
 * fixed-size record per file.
 */
#ifndef WORKSNAP_HASH_JOB_H
#define WORKSNAP_HASH_JOB_H

#include "pool.h"

/* HASH_SPECIAL: the path holds a FIFO, socket or device, which is never read as content */
enum { HASH_OK = 0, HASH_GONE = 1, HASH_DENIED = 2, HASH_ERROR = 3, HASH_CHANGED = 4, HASH_SPECIAL = 5 };

/* Record layout, byte offsets. */
enum {
  HR_STATUS = 0,  /* u8 */
  HR_EXEC = 1,    /* u8: any execute bit */
  HR_HASHED = 2,  /* u8: git's blob hash computed (at HR_GIT) */
  HR_TRUSTED = 3, /* u8: unchanged since before trust_before_ms */
  HR_ERRNO = 4,   /* i32 */
  HR_SIZE = 8,    /* f64: bytes hashed */
  HR_MTIME = 16,  /* f64 ms */
  HR_CTIME = 24,  /* f64 ms, read after the bytes */
  HR_INO = 32,    /* f64 */
  HR_SHA256 = 40, /* 32 bytes */
  HR_GIT = 72,    /* 20 bytes (SHA-1) or 32 (SHA-256) */
  HASH_RECORD = 104
};

typedef struct {
  job_t base;
  /* files whose ctime is older are trusted (hash_job.c) */
  _Atomic double trust_before_ms;
  size_t stream_threshold;
  /* git's ids in bytes: GIT_SHA1_BYTES or GIT_SHA256_BYTES */
  size_t id_bytes;
  uint8_t *records;
} hash_job_t;

/* One file: the job's `run`. */
void hash_job_run(job_t *job, size_t index, worker_t *w);

/* NULL when out of memory; `dirfd` is owned by the job from here on; `id_bytes` as the job's. */
hash_job_t *hash_job_new(const char *paths, size_t paths_len, size_t count, int dirfd, double trust_before_ms, size_t stream_threshold, size_t id_bytes);

#endif
