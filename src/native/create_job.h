/*
 * New files written on the pool's threads: each item a file created beneath
 * the job's directory (its path a few names deep, no symlink followed on the
 * way, never over an existing entry) and filled with its bytes. What an
 * import stages its blobs through (src/repo/file-batches.ts): creating files
 * is most of an import's time, and two threads create files in different
 * directories about twice as fast as one.
 */
#ifndef WORKSNAP_CREATE_JOB_H
#define WORKSNAP_CREATE_JOB_H

#include <sys/types.h>

#include "pool.h"

/* What failed for an item, beside its errno (0: nothing). */
enum { CREATE_OK = 0, CREATE_OPEN = 1, CREATE_WRITE = 2, CREATE_CLOSE = 3 };

/* Record layout, byte offsets: one record an item. */
enum {
  CJ_STEP = 0,  /* i32: CREATE_OK or the step that failed */
  CJ_ERRNO = 4, /* i32 */
  CREATE_RECORD = 8
};

typedef struct slot_block slot_block_t;

typedef struct {
  job_t base;
  /* item i's bytes: data[ends[i-1] .. ends[i]) (from 0 for the first) */
  const uint8_t *data;
  /* the block data lies in, borrowed (one reference, let go with the job); NULL: data is the job's own copy */
  slot_block_t *block;
  uint64_t *ends;
  mode_t mode;
  uint8_t *records;
} create_job_t;

void create_job_run(job_t *job, size_t index, worker_t *w);

/*
 * NULL when out of memory. `paths` (relative to `dirfd`, which the job owns
 * from here on) are copied; `data` too, unless it lies in a live block
 * (slot_block.h: what FileBatches fills), which is borrowed instead, its filler
 * changing nothing in it until the job is done. `ends` holds count offsets into
 * data, each at least the one before it and at most data_len (the caller checks).
 */
create_job_t *create_job_new(const char *paths, size_t paths_len, size_t count, int dirfd, const uint8_t *data, size_t data_len, const double *ends, mode_t mode);

#endif
