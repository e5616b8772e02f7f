/*
 * An export's verified reads put into its bundle without the JavaScript thread: for each file of a window that
 * the scan job (scan_job.h, SCAN_KEEP_SLOTS) read from the work tree with the blob's size and SHA-256, its tar
 * header (the deterministic ustar header src/repo/tar.ts writes), its bytes (borrowed from the window's block)
 * and its padding are queued into the bundle's sink (sink.h), the whole run of them in one call. The first file
 * that is anything else (not read, another digest, a symlink, a name that needs a pax header) stops the run:
 * the caller writes it as before.
 */
#ifndef WORKSNAP_BUNDLE_PUT_H
#define WORKSNAP_BUNDLE_PUT_H

#include <stddef.h>
#include <stdint.h>

#include "scan_job.h"
#include "sink.h"

#define TAR_BLOCK 512
/* ustar's name field; a longer name needs a pax header */
#define TAR_NAME_MAX 100

/* Modes of bundle_put_scanned's entries (one byte each). */
enum { BUNDLE_FILE = 0, BUNDLE_EXEC = 1, BUNDLE_OTHER = 2 };

/*
 * The ustar header of a regular file (typeflag '0') named `prefix` + `name`, of mode `mode` and `size` bytes, in
 * `h`: the bytes tar.ts's putTarHeader writes. 0 when the name is longer than TAR_NAME_MAX or the size does not
 * fit ustar (8 GiB or more): that entry needs a pax header.
 */
int tar_file_header(uint8_t h[TAR_BLOCK], const uint8_t *prefix, size_t prefix_len, const char *name, size_t name_len, unsigned mode, uint64_t size);

typedef struct {
  /* entries put, from the first: each header, bytes and padding queued */
  size_t count;
  /* bytes queued */
  uint64_t bytes;
  /* the sink's queue after the call */
  size_t queued;
  /* 0: out of memory (count entries were put before it) */
  int ok;
} bundle_put_t;

/*
 * Puts the job's items [from, to) (all finished) into the sink while each was read whole into its slot with the
 * size expected and hashed to `digests` (32 bytes per item, the first for `from`) and has mode BUNDLE_FILE or
 * BUNDLE_EXEC in `modes` (one per item, the first for `from`), named `prefix` + its path, a name that fits ustar.
 * Stops at the first item that is not.
 */
bundle_put_t bundle_put_scanned(sink_t *sink, scan_job_t *job, size_t from, size_t to, const uint8_t *digests, const uint8_t *modes, const uint8_t *prefix, size_t prefix_len);

#endif
