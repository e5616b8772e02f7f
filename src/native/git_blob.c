#include "git_blob.h"

#include <stdio.h>

void git_blob_start(git_blob_ctx *c, size_t id_bytes, uint64_t size) {
  c->sha256 = id_bytes == GIT_SHA256_BYTES;
  if (!c->sha256) {
    git_blob_init(&c->ctx.sha1, size);
    return;
  }
  char header[32];
  int n = snprintf(header, sizeof header, "blob %llu", (unsigned long long)size);
  sha256_init(&c->ctx.sha256);
  sha256_update(&c->ctx.sha256, header, (size_t)n + 1); /* with the NUL */
}

void git_blob_update(git_blob_ctx *c, const void *data, size_t len) {
  if (c->sha256) sha256_update(&c->ctx.sha256, data, len);
  else sha1_update(&c->ctx.sha1, data, len);
}

void git_blob_final(git_blob_ctx *c, uint8_t *out) {
  if (c->sha256) sha256_final(&c->ctx.sha256, out);
  else sha1_final(&c->ctx.sha1, out);
}
