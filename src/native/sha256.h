/* SHA-256 (FIPS 180-4): the SHA-NI compression where the CPU has it, portable C elsewhere. */
#ifndef WORKSNAP_SHA256_H
#define WORKSNAP_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
  uint32_t state[8];
  uint8_t block[64];
  size_t used;     /* bytes waiting in block */
  uint64_t total;  /* bytes hashed so far */
} sha256_ctx;

/* Picks the compression function: SHA-NI when `accelerate` and the CPU has it, else portable. */
void sha256_select(int accelerate);
/* 1 when the SHA-NI compression is in use. */
int sha256_accelerated(void);

void sha256_init(sha256_ctx *c);
void sha256_update(sha256_ctx *c, const void *data, size_t len);
void sha256_final(sha256_ctx *c, uint8_t out[32]);

#endif
