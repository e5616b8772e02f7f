/*
 * grep's reads: each file opened, checked for the binary rule, filtered by
 * the query's required literals and, when asked, hashed; the bytes of a file
 * that may match are kept for the JavaScript thread, which searches them.
 * What reader-pool.ts's threads do, minus running a regex.
 */
#ifndef WORKSNAP_SCAN_JOB_H
#define WORKSNAP_SCAN_JOB_H

#include "pool.h"
#include "slot_block.h"

enum { SCAN_KEEP_NONE = 0, SCAN_KEEP_FILE = 1, SCAN_KEEP_LINES = 2, SCAN_KEEP_SLOTS = 3 };

/*
 * SCAN_KEEP_SLOTS (an export's window of reads): every file read into its own slot of one block (slot_block.h),
 * laid out in advance from the sizes the caller expects (each slot one byte longer, to see the end), rather than
 * into memory of its own: one allocation, one JavaScript object and one free per window instead of one per file.
 */

/* Kinds, numbered as reader-pool.ts's KINDS. */
enum { SCAN_BINARY = 0, SCAN_SKIP = 1, SCAN_BYTES = 2, SCAN_LARGE = 4, SCAN_ERROR = 5 };
/* errno of a path that holds something other than a regular file */
#define SCAN_NOT_REGULAR (-1)

enum {
  SR_KIND = 0,      /* u8 */
  SR_DIGEST = 1,    /* u8: SHA-256 at SR_SHA256 */
  SR_SAME = 2,      /* u8: the stamp was the known one; not hashed again */
  SR_REMEMBER = 3,  /* u8: mtime and ctime old enough for the stamp to be remembered */
  SR_ERRNO = 4,     /* i32 */
  SR_LENGTH = 8,    /* f64: kept bytes */
  SR_STAMP = 16,    /* 5 x f64: dev, ino, size, mtimeMs, ctimeMs */
  SR_SHA256 = 56,   /* 32 bytes */
  SR_OFFSET = 88,   /* f64: where the kept bytes start in a collected batch */
  SCAN_RECORD = 96
};

typedef struct {
  const uint8_t *bytes;
  size_t len;
  /* compared ASCII case-insensitively (the bytes are lowercase) */
  int fold;
} needle_t;

typedef struct {
  job_t base;
  size_t limit;
  size_t sniff;
  double racy_ms;
  /* what to keep of a file that may match: nothing (it is only marked BYTES, unhashed, for the caller to read),
     the whole file, or its candidate lines (scan_job.c) */
  int keep;
  /* one of these must occur (none: no such condition) */
  needle_t *literals;
  size_t literal_count;
  int has_literals;
  /* and one string of each set */
  needle_t **required;
  size_t *required_sizes;
  size_t required_count;
  uint8_t *flags;  /* per item: bit 0 = hash */
  double *known;   /* per item: the remembered stamp, NaN when none; NULL: none at all */
  uint8_t *records;
  uint8_t **kept;
  /* all the needles' bytes */
  uint8_t *needle_bytes;
  /* SCAN_KEEP_SLOTS: the block, each item's slot in it, and the size expected of each (another is not read) */
  slot_block_t *block;
  size_t *slot_at;
  double *expect;
} scan_job_t;

/*
 * Sets up SCAN_KEEP_SLOTS for a job not yet submitted, from the size expected of each item; 0 when out of
 * memory.
 */
int scan_job_slots(scan_job_t *job, const double *expect);

/* A scan job's item: what the pool's threads run (and how a job is known to be a scan job). */
void scan_job_run(job_t *job, size_t index, worker_t *w);

/* NULL when out of memory; `dirfd` (AT_FDCWD for absolute paths) is owned by the job from here on. */
scan_job_t *scan_job_new(const char *paths, size_t paths_len, size_t count, int dirfd);

#endif
