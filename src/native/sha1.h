/* SHA-1 (FIPS 180-4), portable C: git's object ids. */
#ifndef WORKSNAP_SHA1_H
#define WORKSNAP_SHA1_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
  uint32_t state[5];
  uint8_t block[64];
  size_t used;
  uint64_t total;
} sha1_ctx;

/* Picks the compression function: the SHA extensions when `accelerate` and the CPU has them, else portable. */
void sha1_select(int accelerate);
int sha1_accelerated(void);

void sha1_init(sha1_ctx *c);
void sha1_update(sha1_ctx *c, const void *data, size_t len);
void sha1_final(sha1_ctx *c, uint8_t out[20]);

/* Starts git's blob id of `size` bytes: SHA-1 over "blob <size>\0" and then the content. */
void git_blob_init(sha1_ctx *c, uint64_t size);

#endif
