/*
 * Many files' hunks of one patch applied on a few threads, each file's old
 * and new bytes hashed (SHA-256) on the same thread while they are in the
 * cache: a 500-file patch's apply and the hashing a write does next were two
 * passes on the JavaScript thread and the hash pool, one after the other.
 *
 * Two phases, because the new bytes go into arrays only the JavaScript thread
 * may allocate: patch_many_place places every file's hunks (patch_place) and
 * hashes its old bytes; the caller then gives each placed item its `out` (new_size
 * bytes) and patch_many_splice writes it (patch_splice), hashes it and frees
 * the plan. Items are taken one at a time from a shared counter, so a few
 * large files do not leave a thread idle.
 */
#ifndef WORKSNAP_PATCH_MANY_H
#define WORKSNAP_PATCH_MANY_H

#include <stddef.h>
#include <stdint.h>

#include "patch_hunks.h"

typedef struct {
  const uint8_t *file;
  size_t flen;
  /* The file's hunks as patchApply takes them: body [spec[3k], spec[3k + 1]), stated old start spec[3k + 2]. */
  const int32_t *spec;
  size_t hunks;
  /* Whether the caller knows the old bytes' digest already: old_digest is then left as it is. */
  int old_known;
  /* patch_place's answer: 1 placed (plan holds the placement), 0 declined, -1 out of memory. */
  int placed;
  patch_place_t plan;
  /* Where the new bytes go (plan.new_size of them), set between the phases for every placed item. */
  uint8_t *out;
  uint8_t old_digest[32], new_digest[32];
} patch_item_t;

/* The patch shared by every item: its bytes and line starts (n lines). */
typedef struct {
  const uint8_t *p;
  const uint32_t *starts;
  size_t n;
} patch_text_t;

/* Phase one: every item placed and its old bytes hashed (unless old_known), on up to `threads` threads (the caller's among them). */
void patch_many_place(patch_item_t *items, size_t count, const patch_text_t *patch, int threads);

/* Phase two: every placed item spliced into its `out` and hashed; every plan is freed. */
void patch_many_splice(patch_item_t *items, size_t count, const patch_text_t *patch, int threads);

#endif
