/*
 * git's blob id in either object format: SHA-1 (20 bytes) or SHA-256 (32 bytes) over "blob <size>\0" and then
 * the content. One context for both, so the readers that check a file against its index blob (hash_job.c,
 * trigram_job.c) serve repositories of both formats alike.
 */
#ifndef WORKSNAP_GIT_BLOB_H
#define WORKSNAP_GIT_BLOB_H

#include <stddef.h>
#include <stdint.h>

#include "sha1.h"
#include "sha256.h"

/* An id's length in bytes in each format. */
enum { GIT_SHA1_BYTES = 20, GIT_SHA256_BYTES = 32, GIT_ID_MAX = 32 };

typedef struct {
  int sha256;
  union {
    sha1_ctx sha1;
    sha256_ctx sha256;
  } ctx;
} git_blob_ctx;

/* Starts the id of a blob of `size` bytes; `id_bytes` is GIT_SHA1_BYTES or GIT_SHA256_BYTES. */
void git_blob_start(git_blob_ctx *c, size_t id_bytes, uint64_t size);
void git_blob_update(git_blob_ctx *c, const void *data, size_t len);
/* Writes the id: 20 or 32 bytes, as started. */
void git_blob_final(git_blob_ctx *c, uint8_t *out);

#endif
