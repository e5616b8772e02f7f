/*
 * The trigram index's build (src/repo/trigram-index/): each file of the job
 * is read, checked to hold the blob it should (git's blob id, or a SHA-256),
 * hashed with SHA-256 (the index's key) and, unless binary, reduced to the
 * set of its byte trigrams; the job's last item builds one segment of those
 * blobs, in the format src/repo/trigram-index/segment.ts reads and writes.
 */
#ifndef WORKSNAP_TRIGRAM_JOB_H
#define WORKSNAP_TRIGRAM_JOB_H

#include <stdatomic.h>

#include "pool.h"

/* What became of a file. */
enum {
  TRI_TEXT = 0,      /* indexed: its trigrams are in the segment */
  TRI_BINARY = 1,    /* indexed as binary (a NUL among its first `sniff` bytes): no trigrams */
  TRI_MISMATCH = 2,  /* its bytes are not the blob expected (changed, or converted by git): left out */
  TRI_GONE = 3,      /* missing, not a regular file, or a symlink */
  TRI_TOO_LARGE = 4, /* over the job's file limit: left out */
  TRI_DEFERRED = 5,  /* not read: the job's trigram budget was spent; index it in a later job */
  TRI_ERROR = 6      /* another read error (errno at TR_ERRNO) */
};

/*
 * What a file is checked against: git's blob id (SHA-1 or SHA-256 repositories), the SHA-256 of its bytes, or
 * the SHA-256 of its bytes with the git blob id a capture verified for them beside it (one hash a byte instead
 * of two; the git id is recorded, not computed).
 */
enum {
  TRI_EXPECT_GIT_SHA1 = 1,
  TRI_EXPECT_GIT_SHA256 = 2,
  TRI_EXPECT_SHA256 = 3,
  TRI_EXPECT_SHA256_OF_GIT_SHA1 = 4,
  TRI_EXPECT_SHA256_OF_GIT_SHA256 = 5
};
/* a kind byte, the id zero padded to 32 bytes, then (kinds 4 and 5) the git blob id zero padded to 32 bytes */
#define TRI_EXPECT_SIZE 65

/* Record layout, byte offsets. */
enum {
  TR_STATUS = 0,  /* u8 */
  TR_ERRNO = 4,   /* i32 */
  TR_SIZE = 8,    /* f64: bytes read */
  TR_COUNT = 16,  /* f64: distinct trigrams */
  TR_SHA256 = 24, /* 32 bytes */
  TRIGRAM_RECORD = 56
};

typedef struct {
  job_t base; /* base.count = files + 1: the last item builds the segment */
  size_t files;
  uint8_t *expects;
  uint8_t *records;
  /* each file's distinct trigrams, grouped by their first byte (any order within a group) */
  uint32_t **trigrams;
  size_t file_limit;
  /* trigrams (summed over files) after which further files are deferred: the job's memory budget */
  size_t pair_cap;
  size_t sniff;
  atomic_size_t pairs;
  uint8_t *segment;
  size_t segment_len;
  int segment_errno;
} trigram_job_t;

void trigram_job_run(job_t *job, size_t index, worker_t *w);

/* NULL when out of memory; `dirfd` is owned by the job from here on; `expects` is copied. */
trigram_job_t *trigram_job_new(const char *paths, size_t paths_len, size_t files, int dirfd, const uint8_t *expects, size_t file_limit,
                               size_t pair_cap, size_t sniff);

#endif
