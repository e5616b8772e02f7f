/* An export's verified window queued into its bundle (bundle_put.h). */
#include "bundle_put.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* `value` in octal, zero padded to width - 1 digits, then NUL; the sum of the bytes written. */
static unsigned put_octal(uint8_t *h, size_t off, size_t width, uint64_t value) {
  unsigned sum = 0;
  for (size_t i = off + width - 1; i-- > off;) {
    h[i] = (uint8_t)('0' + (value & 7));
    sum += h[i];
    value >>= 3;
  }
  h[off + width - 1] = 0;
  return sum;
}

/* The fields every header shares (tar.ts's TEMPLATE): uid, gid, mtime and devices 0, the magic, the checksum as spaces. */
static uint8_t template_h[TAR_BLOCK];
static unsigned template_sum;
static pthread_once_t template_once = PTHREAD_ONCE_INIT;

static void template_init(void) {
  put_octal(template_h, 108, 8, 0);
  put_octal(template_h, 116, 8, 0);
  put_octal(template_h, 136, 12, 0);
  memset(template_h + 148, ' ', 8);
  memcpy(template_h + 257, "ustar", 6);
  memcpy(template_h + 263, "00", 2);
  put_octal(template_h, 329, 8, 0);
  put_octal(template_h, 337, 8, 0);
  unsigned sum = 0;
  for (size_t i = 0; i < TAR_BLOCK; i++) sum += template_h[i];
  template_sum = sum;
}

int tar_file_header(uint8_t h[TAR_BLOCK], const uint8_t *prefix, size_t prefix_len, const char *name, size_t name_len, unsigned mode, uint64_t size) {
  if (prefix_len + name_len > TAR_NAME_MAX || size > 077777777777ull) return 0;
  pthread_once(&template_once, template_init);
  memcpy(h, template_h, TAR_BLOCK);
  memcpy(h, prefix, prefix_len);
  memcpy(h + prefix_len, name, name_len);
  unsigned sum = template_sum;
  for (size_t i = 0; i < prefix_len + name_len; i++) sum += h[i];
  sum += put_octal(h, 100, 8, mode);
  sum += put_octal(h, 124, 12, size);
  h[156] = '0';
  sum += '0';
  /* six octal digits, NUL, space */
  for (size_t i = 154; i-- > 148;) {
    h[i] = (uint8_t)('0' + (sum & 7));
    sum >>= 3;
  }
  h[154] = 0;
  h[155] = ' ';
  return 1;
}

static const uint8_t zeros[TAR_BLOCK];

/* Pieces at least this long are borrowed from the block rather than copied (sink_napi.c's BORROW_MIN). */
#define BORROW_MIN 4096

static void release_block(void *block) { slot_block_release(block); }

static double f64_at(const uint8_t *rec, size_t off) {
  double d;
  memcpy(&d, rec + off, sizeof d);
  return d;
}

bundle_put_t bundle_put_scanned(sink_t *sink, scan_job_t *job, size_t from, size_t to, const uint8_t *digests, const uint8_t *modes, const uint8_t *prefix, size_t prefix_len) {
  bundle_put_t r = {0, 0, 0, 1};
  size_t n = to > from ? to - from : 0;
  if (n == 0 || job->keep != SCAN_KEEP_SLOTS || !job->block) {
    r.queued = sink_queued(sink);
    return r;
  }
  uint8_t *headers = malloc(n * TAR_BLOCK);
  sink_piece_t *pieces = malloc(3 * n * sizeof *pieces);
  if (!headers || !pieces) {
    free(headers);
    free(pieces);
    r.ok = 0;
    r.queued = sink_queued(sink);
    return r;
  }
  size_t np = 0, k = 0;
  uint64_t bytes = 0;
  for (; k < n; k++) {
    size_t i = from + k;
    const uint8_t *rec = job->records + i * SCAN_RECORD;
    if (rec[SR_KIND] != SCAN_BYTES || rec[SR_DIGEST] != 1 || modes[k] > BUNDLE_EXEC) break;
    if (memcmp(rec + SR_SHA256, digests + 32 * k, 32) != 0) break;
    double len = f64_at(rec, SR_LENGTH);
    if (len != job->expect[i]) break;
    const char *name = job->base.paths + job->base.offsets[i];
    size_t size = (size_t)len;
    uint8_t *h = headers + k * TAR_BLOCK;
    if (!tar_file_header(h, prefix, prefix_len, name, strlen(name), modes[k] == BUNDLE_EXEC ? 0755 : 0644, size)) break;
    pieces[np++] = (sink_piece_t){h, TAR_BLOCK, NULL, NULL};
    if (size > 0) {
      const uint8_t *data = job->block->data + job->slot_at[i];
      if (size >= BORROW_MIN) {
        atomic_fetch_add(&job->block->refs, 1);
        pieces[np++] = (sink_piece_t){data, size, release_block, job->block};
      } else {
        pieces[np++] = (sink_piece_t){data, size, NULL, NULL};
      }
    }
    size_t pad = size % TAR_BLOCK ? TAR_BLOCK - size % TAR_BLOCK : 0;
    if (pad) pieces[np++] = (sink_piece_t){zeros, pad, NULL, NULL};
    bytes += TAR_BLOCK + size + pad;
  }
  size_t queued = 0;
  if (np > 0 && !sink_writev(sink, pieces, np, &queued)) {
    r.ok = 0;
    k = 0;
    bytes = 0;
  } else if (np == 0) {
    queued = sink_queued(sink);
  }
  free(headers);
  free(pieces);
  r.count = k;
  r.bytes = bytes;
  r.queued = queued;
  return r;
}
