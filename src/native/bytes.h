/* A growable run of bytes (the trigram segment's parts, the tree watch's paths, a rendered diff). */
#ifndef WORKSNAP_BYTES_H
#define WORKSNAP_BYTES_H

#include <stdint.h>
#include <stdlib.h>

typedef struct {
  uint8_t *bytes;
  size_t len, cap;
} bytes_t;

/* Room for `more` bytes past len (capacity doubled from `first`); 0 when memory ran out (the bytes kept). */
static inline int bytes_reserve(bytes_t *b, size_t more, size_t first) {
  if (b->len + more <= b->cap) return 1;
  size_t cap = b->cap ? b->cap : first;
  while (cap < b->len + more) cap *= 2;
  uint8_t *grown = realloc(b->bytes, cap);
  if (!grown) return 0;
  b->bytes = grown;
  b->cap = cap;
  return 1;
}

#endif
