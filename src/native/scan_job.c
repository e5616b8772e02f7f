/*
 * One file of a grep, as readerMain in reader-pool.ts does it:
 * - opened without following a symlink, never waiting on a FIFO; anything
 *   but a regular file is an error the caller maps to "gone";
 * - a file over `limit` is not kept: without literals it is LARGE (the
 *   caller windows it); with literals it is streamed through them, SKIP when
 *   none occurs (hashed when asked), LARGE when one does;
 * - a file whose first `sniff` bytes hold a NUL is BINARY;
 * - a file lacking the literals is SKIP, and so is one where no line holds a
 *   literal and a string of every required set (a match never spans lines,
 *   and the regex plan guarantees its line holds them: regex-analysis.ts);
 *   otherwise it is BYTES, with its
 *   bytes kept for the caller, or, when the job keeps nothing (a read ahead
 *   whose caller reads such files again itself), neither kept nor hashed.
 *   A job that keeps lines keeps only the lines that may hold a match (a
 *   literal, when there are any, and a string of every required set), each
 *   with its number: a large file with a few such lines costs a few lines of
 *   memory, not the file (see candidate_lines for the layout).
 * Hashes cover the bytes read whole; a stamp equal to the remembered one
 * (same device, inode, size, mtime and ctime) is not hashed again.
 */
#define _GNU_SOURCE
#include "scan_job.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "files.h"
#include "search.h"
#include "sha256.h"

static long long find_needle(const uint8_t *hay, size_t len, const needle_t *n) {
  return n->fold ? find_fold(hay, len, n->bytes, n->len) : find(hay, len, n->bytes, n->len);
}

static int found(const uint8_t *hay, size_t len, const needle_t *n) { return find_needle(hay, len, n) >= 0; }

static int holds_any(const uint8_t *hay, size_t len, const needle_t *set, size_t count) {
  for (size_t i = 0; i < count; i++)
    if (found(hay, len, &set[i])) return 1;
  return 0;
}

/* The earliest occurrence at or after `from` of any needle of the set, or -1. */
static long long first_of(const uint8_t *hay, size_t len, size_t from, const needle_t *set, size_t count) {
  long long best = -1;
  for (size_t i = 0; i < count; i++) {
    size_t limit = best >= 0 ? (size_t)best + set[i].len : len;
    if (limit > len) limit = len;
    if (limit <= from) continue;
    long long at = find_needle(hay + from, limit - from, &set[i]);
    if (at >= 0 && (best < 0 || (long long)from + at < best)) best = (long long)from + at;
  }
  return best;
}

static int holds(scan_job_t *job, const uint8_t *hay, size_t len) {
  if (job->has_literals && !holds_any(hay, len, job->literals, job->literal_count)) return 0;
  for (size_t r = 0; r < job->required_count; r++)
    if (!holds_any(hay, len, job->required[r], job->required_sizes[r])) return 0;
  if (job->required_count == 0) return 1;
  // line by line: some line must hold a literal (or the first required set) and every required set
  const needle_t *lead = job->has_literals ? job->literals : job->required[0];
  size_t lead_count = job->has_literals ? job->literal_count : job->required_sizes[0];
  size_t pos = 0;
  while (pos < len) {
    long long p = first_of(hay, len, pos, lead, lead_count);
    if (p < 0) return 0;
    const uint8_t *nl = memchr(hay + p, '\n', len - (size_t)p);
    size_t end = nl ? (size_t)(nl - hay) : len;
    size_t start = (size_t)p;
    while (start > 0 && hay[start - 1] != '\n') start--;
    int all = 1;
    for (size_t r = 0; all && r < job->required_count; r++) all = holds_any(hay + start, end - start, job->required[r], job->required_sizes[r]);
    if (all) return 1;
    pos = end + 1;
  }
  return 0;
}

/* A line [start, end) (without its newline) holds a string of every required set. */
static int line_holds_required(scan_job_t *job, const uint8_t *line, size_t len) {
  for (size_t r = 0; r < job->required_count; r++)
    if (!holds_any(line, len, job->required[r], job->required_sizes[r])) return 0;
  return 1;
}

typedef struct {
  size_t start, end; /* end includes the newline, when the line has one */
  uint32_t number;   /* 1-based */
} span_t;

/*
 * The lines of a file that may hold a match, as one allocation: a u32 count
 * n, n u32 line numbers (1-based, increasing), then the n lines back to
 * back, each with its newline when it has one (all little-endian). NULL when
 * out of memory.
 */
static uint8_t *candidate_lines(scan_job_t *job, const uint8_t *hay, size_t len, size_t *out_len) {
  const needle_t *lead = job->has_literals ? job->literals : job->required_count ? job->required[0] : NULL;
  size_t lead_count = job->has_literals ? job->literal_count : job->required_count ? job->required_sizes[0] : 0;
  span_t *spans = NULL;
  size_t n = 0, cap = 0, bytes = 0;
  size_t pos = 0, counted = 0;
  uint32_t number = 1;
  while (pos < len) {
    size_t start, end;
    if (lead) {
      long long p = first_of(hay, len, pos, lead, lead_count);
      if (p < 0) break;
      start = (size_t)p;
      while (start > pos && hay[start - 1] != '\n') start--;
    } else {
      start = pos;
    }
    const uint8_t *nl = memchr(hay + start, '\n', len - start);
    end = nl ? (size_t)(nl - hay) : len;
    number += (uint32_t)count_byte(hay + counted, start - counted, '\n');
    counted = start;
    if (line_holds_required(job, hay + start, end - start)) {
      if (n == cap) {
        size_t grown = cap ? cap * 2 : 16;
        span_t *more = realloc(spans, grown * sizeof *spans);
        if (!more) {
          free(spans);
          return NULL;
        }
        spans = more;
        cap = grown;
      }
      size_t stop = nl ? end + 1 : len;
      spans[n++] = (span_t){start, stop, number};
      bytes += stop - start;
    }
    pos = end + 1;
  }
  size_t total = 4 + 4 * n + bytes;
  uint8_t *out = malloc(total);
  if (!out) {
    free(spans);
    return NULL;
  }
  uint32_t count = (uint32_t)n;
  memcpy(out, &count, 4);
  uint8_t *at = out + 4 + 4 * n;
  for (size_t i = 0; i < n; i++) {
    memcpy(out + 4 + 4 * i, &spans[i].number, 4);
    memcpy(at, hay + spans[i].start, spans[i].end - spans[i].start);
    at += spans[i].end - spans[i].start;
  }
  free(spans);
  *out_len = total;
  return out;
}

static void digest(const uint8_t *bytes, size_t len, uint8_t *rec) {
  sha256_ctx c;
  sha256_init(&c);
  sha256_update(&c, bytes, len);
  sha256_final(&c, rec + SR_SHA256);
  rec[SR_DIGEST] = 1;
}

/* A file over the limit through the literals, piece by piece, keeping the tail a literal may straddle. */
static void stream(scan_job_t *job, int fd, worker_t *w, size_t have, int hash, uint8_t *rec) {
  size_t overlap = 0;
  for (size_t i = 0; i < job->literal_count; i++)
    if (job->literals[i].len > overlap + 1) overlap = job->literals[i].len - 1;
  sha256_ctx c;
  if (hash) sha256_init(&c);
  size_t carry = 0, end = have;
  off_t offset = (off_t)have; /* read_upto reads with pread and leaves the descriptor's offset at 0 */
  int first = 1;
  for (;;) {
    if (first && memchr(w->buf, 0, end < job->sniff ? end : job->sniff)) {
      rec[SR_KIND] = SCAN_BINARY;
      return;
    }
    first = 0;
    if (holds_any(w->buf, end, job->literals, job->literal_count)) {
      rec[SR_KIND] = SCAN_LARGE;
      return;
    }
    if (hash) sha256_update(&c, w->buf + carry, end - carry);
    size_t keep = overlap < end ? overlap : end;
    memmove(w->buf, w->buf + end - keep, keep);
    carry = keep;
    ssize_t got;
    do got = pread(fd, w->buf + carry, w->cap - carry, offset);
    while (got < 0 && errno == EINTR);
    if (got < 0) {
      rec[SR_KIND] = SCAN_ERROR;
      put_i32(rec, SR_ERRNO, errno);
      return;
    }
    if (got == 0) break;
    offset += got;
    end = carry + (size_t)got;
  }
  rec[SR_KIND] = SCAN_SKIP;
  if (hash) {
    sha256_final(&c, rec + SR_SHA256);
    rec[SR_DIGEST] = 1;
  }
}

/*
 * A file kept whole with nothing to look for in it (an export's read: no literals, no required strings, no
 * sniff): read straight into the buffer handed to the caller, `size` bytes as fstat said and one more to see
 * the end, rather than into the worker's buffer and copied. Half the memory touched: an export's reads and
 * copies were a third of its 378,000 page faults. Returns 0 when the file turned out longer than fstat said
 * (the caller reads it the usual way, bounded by the limit), else 1 with the record filled.
 */
static int keep_whole(scan_job_t *job, size_t index, int fd, size_t size, int want_digest, uint8_t *rec) {
  uint8_t *buf;
  size_t len;
  int r = read_sized(fd, size, &buf, &len);
  if (r == 1) {
    free(buf);
    return 0;
  }
  if (r < 0) {
    rec[SR_KIND] = SCAN_ERROR;
    put_i32(rec, SR_ERRNO, -r);
    return 1;
  }
  if (want_digest) digest(buf, len, rec);
  job->kept[index] = buf;
  put_f64(rec, SR_LENGTH, (double)len);
  rec[SR_KIND] = SCAN_BYTES;
  return 1;
}

/*
 * SCAN_KEEP_SLOTS: a file of the size expected read into its slot (up to one byte more, to see the end); a file of
 * another size, or that turns out longer or shorter while read, is only marked SKIP (the caller reads the blob
 * elsewhere).
 */
static void keep_in_slot(scan_job_t *job, size_t index, int fd, size_t size, int want_digest, uint8_t *rec) {
  if ((double)size != job->expect[index]) {
    rec[SR_KIND] = SCAN_SKIP;
    return;
  }
  uint8_t *slot = job->block->data + job->slot_at[index];
  size_t got = 0;
  while (got <= size) {
    ssize_t n = pread_again(fd, slot + got, size + 1 - got, (off_t)got);
    if (n < 0) {
      rec[SR_KIND] = SCAN_ERROR;
      put_i32(rec, SR_ERRNO, errno);
      return;
    }
    if (n == 0) break;
    got += (size_t)n;
  }
  if (got != size) {
    rec[SR_KIND] = SCAN_SKIP;
    return;
  }
  if (want_digest) digest(slot, size, rec);
  put_f64(rec, SR_LENGTH, (double)size);
  put_f64(rec, SR_OFFSET, (double)job->slot_at[index]);
  rec[SR_KIND] = SCAN_BYTES;
}

void scan_job_run(job_t *base, size_t index, worker_t *w) {
  scan_job_t *job = (scan_job_t *)base;
  uint8_t *rec = job->records + index * SCAN_RECORD;
  int fd = open_item(base, index);
  if (fd < 0) {
    rec[SR_KIND] = SCAN_ERROR;
    put_i32(rec, SR_ERRNO, errno == ENXIO ? SCAN_NOT_REGULAR : errno); /* ENXIO: a socket */
    return;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    rec[SR_KIND] = SCAN_ERROR;
    put_i32(rec, SR_ERRNO, errno);
    close(fd);
    return;
  }
  if (!S_ISREG(st.st_mode)) {
    /* a directory that took the file's place is the file gone; a FIFO, socket or device is never read */
    rec[SR_KIND] = SCAN_ERROR;
    put_i32(rec, SR_ERRNO, S_ISDIR(st.st_mode) ? EISDIR : SCAN_NOT_REGULAR);
    close(fd);
    return;
  }
  double stamp[5] = {(double)st.st_dev, (double)st.st_ino, (double)st.st_size, stat_ms(ST_MTIME(st)), stat_ms(ST_CTIME(st))};
  for (int k = 0; k < 5; k++) put_f64(rec, SR_STAMP + 8 * k, stamp[k]);
  int hash = job->flags[index] & 1;
  const double *known = job->known ? job->known + 5 * index : NULL;
  int same = hash && known && !isnan(known[0]);
  for (int k = 0; same && k < 5; k++) same = known[k] == stamp[k];
  double settled = now_ms() - job->racy_ms;
  rec[SR_SAME] = (uint8_t)same;
  rec[SR_REMEMBER] = stamp[3] < settled && stamp[4] < settled;
  int want_digest = hash && !same;
  if ((size_t)st.st_size > job->limit) {
    if (!job->has_literals) {
      rec[SR_KIND] = SCAN_LARGE;
    } else {
      long long got = read_upto(fd, w, w->cap ? w->cap - 1 : (1 << 20) - 1, -1);
      if (got < 0) {
        rec[SR_KIND] = SCAN_ERROR;
        put_i32(rec, SR_ERRNO, errno);
      } else {
        stream(job, fd, w, (size_t)got, want_digest, rec);
      }
    }
    close(fd);
    return;
  }
  if (job->keep == SCAN_KEEP_SLOTS) {
    keep_in_slot(job, index, fd, (size_t)st.st_size, want_digest, rec);
    close(fd);
    return;
  }
  if (job->keep == SCAN_KEEP_FILE && !job->has_literals && job->required_count == 0 && job->sniff == 0 &&
      keep_whole(job, index, fd, (size_t)st.st_size, want_digest, rec)) {
    close(fd);
    return;
  }
  long long got = read_upto(fd, w, job->limit, (long long)st.st_size);
  close(fd);
  if (got < 0) {
    rec[SR_KIND] = SCAN_ERROR;
    put_i32(rec, SR_ERRNO, errno);
    return;
  }
  size_t len = (size_t)got;
  if (len > job->limit) {
    rec[SR_KIND] = SCAN_LARGE; /* it grew since the stat */
    return;
  }
  if (memchr(w->buf, 0, len < job->sniff ? len : job->sniff)) {
    rec[SR_KIND] = SCAN_BINARY;
    return;
  }
  if (!holds(job, w->buf, len)) {
    if (want_digest) digest(w->buf, len, rec);
    rec[SR_KIND] = SCAN_SKIP;
    return;
  }
  if (!job->keep) {
    rec[SR_KIND] = SCAN_BYTES;
    return;
  }
  if (want_digest) digest(w->buf, len, rec);
  uint8_t *copy;
  size_t kept = len;
  if (job->keep == SCAN_KEEP_LINES) {
    copy = candidate_lines(job, w->buf, len, &kept);
  } else {
    copy = malloc(len ? len : 1);
    if (copy) memcpy(copy, w->buf, len);
  }
  if (!copy) {
    rec[SR_KIND] = SCAN_ERROR;
    put_i32(rec, SR_ERRNO, ENOMEM);
    return;
  }
  job->kept[index] = copy;
  put_f64(rec, SR_LENGTH, (double)kept);
  rec[SR_KIND] = SCAN_BYTES;
}

static void scan_job_free_inputs(scan_job_t *job) {
  free(job->literals);
  if (job->required) {
    for (size_t r = 0; r < job->required_count; r++) free(job->required[r]);
  }
  free(job->required);
  free(job->required_sizes);
  free(job->needle_bytes);
  free(job->flags);
  free(job->known);
}

int scan_job_slots(scan_job_t *job, const double *expect) {
  size_t n = job->base.count;
  job->expect = malloc((n ? n : 1) * sizeof *job->expect);
  job->slot_at = malloc((n ? n : 1) * sizeof *job->slot_at);
  if (!job->expect || !job->slot_at) return 0;
  size_t total = 0;
  for (size_t i = 0; i < n; i++) {
    double e = expect[i];
    /* a size that cannot be a file's here (negative, not whole, past the limit) gets no room and is never read */
    if (!(e >= 0) || e > (double)job->limit || e != floor(e)) e = -1;
    job->expect[i] = e;
    job->slot_at[i] = total;
    if (e >= 0) total += (size_t)e + 1;
  }
  slot_job_opened();
  job->block = slot_block_new(total);
  if (!job->block) {
    slot_job_ended();
    return 0;
  }
  job->keep = SCAN_KEEP_SLOTS;
  return 1;
}

static void scan_destroy(job_t *base) {
  scan_job_t *job = (scan_job_t *)base;
  slot_block_release(job->block);
  if (job->block) slot_job_ended();
  free(job->slot_at);
  free(job->expect);
  for (size_t i = 0; job->kept && i < base->count; i++) free(job->kept[i]);
  free(job->kept);
  free(job->records);
  scan_job_free_inputs(job);
  free(job);
}

scan_job_t *scan_job_new(const char *paths, size_t paths_len, size_t count, int dirfd) {
  scan_job_t *job = calloc(1, sizeof *job);
  if (!job) return NULL;
  job->base.run = scan_job_run;
  job->base.destroy = scan_destroy;
  size_t n = count ? count : 1;
  int ok = job_init(&job->base, paths, paths_len, count, dirfd);
  job->records = calloc(n, SCAN_RECORD);
  job->kept = calloc(n, sizeof(uint8_t *));
  job->flags = calloc(n, 1);
  if (!ok || !job->records || !job->kept || !job->flags) {
    job_discard(&job->base);
    return NULL;
  }
  return job;
}
