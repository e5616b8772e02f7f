/* The SHA-256 of many buffers at once, spread over a few threads the call starts and joins (it blocks). */
#ifndef WORKSNAP_SHA256_MANY_H
#define WORKSNAP_SHA256_MANY_H

#include <stddef.h>
#include <stdint.h>

/*
 * out[32 k .. 32 k + 31] = SHA-256 of data[k] (len[k] bytes), for k < n, on
 * up to `threads` threads (the calling one included), each given a run of
 * buffers of about the same number of bytes. Returns 0, or -1 when no thread
 * could be started (then everything was hashed on the calling thread).
 */
int sha256_many(const uint8_t *const *data, const size_t *len, size_t n, uint8_t *out, int threads);

#endif
