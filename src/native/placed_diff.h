/*
 * The unified diff of two text files rendered from their line changes (a
 * patch's, as placed): src/ops/diff/placed-diff.ts's renderPlacedDiff after
 * its checks of the sides, byte for byte. The changes are checked against
 * both files on the way: every stretch of lines between them must be
 * byte-equal in the two files, at the line numbers they give.
 */
#ifndef WORKSNAP_PLACED_DIFF_H
#define WORKSNAP_PLACED_DIFF_H

#include <stddef.h>
#include <stdint.h>

#include "bytes.h"

/*
 * Renders into `out` (grown with realloc; the caller frees out->bytes, also
 * after a failure): `head` (the section and names headers), then one hunk per
 * group of changes closer than 2 * context lines. `changes` holds n
 * quadruples (oldStart, oldEnd, newStart, newEnd), 0-based lines, sorted.
 * Returns 1, 0 when the changes do not turn `a` into `b`, -1 when memory ran out.
 */
int placed_diff(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen, const int32_t *changes, size_t n,
                const uint8_t *head, size_t head_len, int32_t context, bytes_t *out);

#endif
