/*
 * A stored manifest read as columns without a JSON parser (src/repo/manifest-parse.ts), and the sizes of its blobs
 * found in the git-blob map's records without a JavaScript map (src/repo/git-blob-map.ts): a 100,000-file export
 * spent 0.65-0.85 s on one core on these before its first file was read, the other core idle, and 0.4-0.5 s now.
 */
#ifndef WORKSNAP_MANIFEST_COLUMNS_H
#define WORKSNAP_MANIFEST_COLUMNS_H

#include <stddef.h>
#include <stdint.h>

/* A blob id as a manifest holds it: "sha256:" and 64 lowercase hex digits. */
#define MANIFEST_ID_BYTES 71

enum { MANIFEST_MODE_FILE = 0, MANIFEST_MODE_EXEC = 1, MANIFEST_MODE_LINK = 2 };

/*
 * Per entry, MANIFEST_ROW numbers: where its blob id starts in the text, where its path starts, the path's length,
 * and the first entry with the same blob id (itself for the first).
 */
#define MANIFEST_ROW 4

typedef struct {
  size_t count;
  /* count * MANIFEST_ROW */
  uint32_t *rows;
  /* per entry: MANIFEST_MODE_* */
  uint8_t *modes;
} manifest_columns_t;

/*
 * The entries of `text` when it is a manifest exactly as repo/manifest.ts writes one without escapes:
 * {"entries":[{"blob":"sha256:<64 hex>","mode":"100755"|"120000","path":"..."},...]} (mode optional), no
 * whitespace, no backslash and no control character in any string (bytes above 0x7f are left as they are), under
 * 4 GiB. 1 with `out` filled (free it with manifest_columns_free), 0 when the text is anything else (the caller
 * parses it as JSON, which gives such a text the result or the error it deserves), -1 when out of memory.
 */
int manifest_columns(const uint8_t *text, size_t len, manifest_columns_t *out);

void manifest_columns_free(manifest_columns_t *c);

/*
 * The size of each of `n` blob ids (MANIFEST_ID_BYTES each, one after the other in `ids`) in `records`: `count`
 * records of `record_bytes`, each holding a blob's SHA-256 (32 bytes) at `sha_at` and its size (a little-endian
 * double) at `size_at`. A blob recorded more than once takes its last record's size; one not recorded is -1, an id
 * not of the form above -2 (the caller looks it up as it is). 0, or -1 when out of memory.
 */
int record_sizes(const uint8_t *records, size_t count, size_t record_bytes, size_t sha_at, size_t size_at, const uint8_t *ids, size_t n,
                 double *sizes);

#endif
