/*
 * The two loops that dominate applying a large patch, over the patch's bytes:
 * reading each hunk's header and body (src/ops/patch/parse-hunk.ts
 * parseHunkAt) and placing and splicing one file's hunks (apply.ts
 * applyHunks with match.ts). Each does the plain case byte for byte as the
 * TypeScript does and declines the rest (a hunk whose counts must be
 * recounted or whose body is malformed, a hunk that does not fit where it
 * says or near it, "\ No newline at end of file", an insertion without old
 * lines): the caller then takes the TypeScript path, which also words the
 * rejects.
 *
 * A patch is its bytes and its line starts as lineStarts gives them
 * (starts[j] is where line j begins, starts[n] the end of the patch); line
 * j's content is its bytes without the "\n" that ends it, as the TypeScript
 * parser's lines (the patch split at "\n", a last empty piece dropped).
 */
#ifndef WORKSNAP_PATCH_HUNKS_H
#define WORKSNAP_PATCH_HUNKS_H

#include <stddef.h>
#include <stdint.h>

/* Numbers per hunk in patch_hunks' output: line, oldStart, statedOld, newStart, statedNew, end. */
#define HUNK_FIELDS 6

/*
 * Every hunk header line whose hunk reads plainly: the header counts end the
 * body exactly, no diff line follows it, the body is well formed. For each,
 * HUNK_FIELDS numbers into `out` (room for HUNK_FIELDS per line starting
 * with "@@"): the header's line, its four numbers, the line after the body.
 * Returns how many hunks.
 */
size_t patch_hunks(const uint8_t *p, const uint32_t *starts, size_t n, int32_t *out);

/* Where one file's hunks go, made by patch_place and written by patch_splice. */
typedef struct {
  size_t hunks;
  /* Per hunk: the old side's lines [start, end) in the file; its offset from the stated line. */
  int64_t *start, *end, *offset;
  /* Quadruples (oldStart, oldEnd, newStart, newEnd): the lines each hunk changes, as placed. */
  int32_t *changes;
  size_t nchanges;
  /* The file's line starts (lines + 1), and the size of the patched file. */
  uint32_t *file_starts;
  size_t new_size;
} patch_place_t;

/*
 * Places hunk k, whose body is patch lines [spec[3k], spec[3k + 1]) and whose
 * header states old start spec[3k + 2], in the file: at the stated line,
 * else at the nearest exact match (the earlier on a tie), never before the
 * end of the previous hunk. Returns 1 (free the plan with patch_place_free),
 * 0 when declined, -1 when memory ran out.
 */
int patch_place(const uint8_t *file, size_t flen, const uint8_t *p, const uint32_t *starts, size_t n, const int32_t *spec, size_t hunks,
                patch_place_t *plan);

/* Writes the patched file (plan->new_size bytes) into `out`. */
void patch_splice(const patch_place_t *plan, const uint8_t *file, size_t flen, const uint8_t *p, const uint32_t *starts, const int32_t *spec,
                  uint8_t *out);

void patch_place_free(patch_place_t *plan);

#endif
