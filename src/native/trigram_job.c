/*
 * Reading a file into its trigram set, and building a segment of many
 * (trigram_job.h). The TypeScript twin is src/repo/trigram-index/build.ts
 * with segment.ts: the tests hold the segments of both byte for byte equal.
 *
 * A file's trigrams are collected in a bitmap of all 2^24 of them (2 MiB per
 * thread), with the list of those seen, then grouped by their first byte.
 * The segment is built one first byte at a time: the files' groups of that
 * byte are counted by their last two bytes, then scattered into posting
 * lists in file order, so every list comes out sorted without a sort.
 */
#include "trigram_job.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bytes.h"
#include "files.h"
#include "git_blob.h"
#include "sha256.h"

#define CHUNK ((size_t)1 << 20)
#define SEEN_WORDS ((size_t)1 << 18) /* 2^24 bits */
#define PREFETCH 8

static _Thread_local uint64_t *seen;
static _Thread_local uint32_t *found;
static _Thread_local size_t found_cap;

static void fail(uint8_t *rec, int err) {
  int gone = err == ENOENT || err == ENOTDIR || err == ELOOP || err == EISDIR;
  rec[TR_STATUS] = gone ? TRI_GONE : TRI_ERROR;
  put_i32(rec, TR_ERRNO, err);
}

/*
 * Adds the trigrams of `p[0..n)` to the thread's set; `carry` holds the last two bytes before it, `have` how many.
 * About one trigram in four of source text is new to its file, at no foreseeable place: a branch on each one
 * mispredicts about as often, and those mispredictions were most of the time spent here. So the bytes go in
 * blocks of BLOCK: a block's trigrams are looked up in the bitmap with no branch, and only the new ones (a mask,
 * taken in order) are added, each checked again in case the same trigram came earlier in the block. The list
 * comes out in the same order as one trigram at a time (4.4 against 6.0 ns a byte in a micro-benchmark on the
 * bench tree's files). A bitmap word is written only when its bit is new: writing every byte's word (a
 * branch-free version) made each load wait behind the stores before it, and was slower still.
 */
#define BLOCK 32
static int collect(const uint8_t *p, size_t n, uint32_t *carry, size_t *have, size_t *count) {
  uint32_t t = *carry;
  size_t i = 0;
  for (; i < n && *have < 2; i++, (*have)++) t = ((t << 8) | p[i]) & 0xffffff;
  if (found_cap - *count < n - i + 1) {
    size_t cap = found_cap ? found_cap : 4096;
    while (cap - *count < n - i + 1) cap *= 2;
    uint32_t *grown = realloc(found, cap * sizeof *found);
    if (!grown) return 0;
    found = grown;
    found_cap = cap;
  }
  size_t c = *count;
  uint64_t *words = seen;
  uint32_t *list = found;
  for (; i + BLOCK <= n; i += BLOCK) {
    uint32_t block[BLOCK];
    uint32_t fresh = 0;
    for (int j = 0; j < BLOCK; j++) {
      t = ((t << 8) | p[i + j]) & 0xffffff;
      block[j] = t;
      fresh |= (uint32_t)((~words[t >> 6] >> (t & 63)) & 1) << j;
    }
    for (; fresh; fresh &= fresh - 1) {
      uint32_t x = block[__builtin_ctz(fresh)];
      uint64_t bit = (uint64_t)1 << (x & 63);
      uint64_t old = words[x >> 6];
      if (!(old & bit)) {
        words[x >> 6] = old | bit;
        list[c++] = x;
      }
    }
  }
  for (; i < n; i++) {
    t = ((t << 8) | p[i]) & 0xffffff;
    uint64_t bit = (uint64_t)1 << (t & 63);
    uint64_t old = words[t >> 6];
    if (!(old & bit)) {
      words[t >> 6] = old | bit;
      list[c++] = t;
    }
  }
  *count = c;
  *carry = t;
  return 1;
}

static void forget(size_t count) {
  for (size_t i = 0; i < count; i++) seen[found[i] >> 6] = 0;
}

/*
 * The collected trigrams, grouped by first byte, in a new array; NULL when out of memory. Two halves are
 * counted and placed side by side (the first half's entries first in each group): one counting sort is one
 * chain of increments through 256 places, each waiting on the last when a first byte repeats, as in text.
 */
static uint32_t *grouped(size_t count) {
  uint32_t *out = malloc((count ? count : 1) * sizeof *out);
  if (!out) return NULL;
  size_t half = count / 2;
  size_t lo[257] = {0}, hi[257] = {0};
  for (size_t i = 0; i < half; i++) {
    lo[(found[i] >> 16) + 1]++;
    hi[(found[half + i] >> 16) + 1]++;
  }
  if (count & 1) hi[(found[count - 1] >> 16) + 1]++;
  /* per first byte: the first half's entries, then the second's */
  size_t at = 0;
  for (int b = 0; b < 256; b++) {
    size_t a = lo[b + 1], c = hi[b + 1];
    lo[b] = at;
    hi[b] = at + a;
    at += a + c;
  }
  for (size_t i = 0; i < half; i++) {
    uint32_t x = found[i], y = found[half + i];
    out[lo[x >> 16]++] = x;
    out[hi[y >> 16]++] = y;
  }
  if (count & 1) out[hi[found[count - 1] >> 16]++] = found[count - 1];
  return out;
}

static int verified(trigram_job_t *job, size_t index, const uint8_t *sha256, const uint8_t *git) {
  const uint8_t *expect = job->expects + index * TRI_EXPECT_SIZE;
  switch (expect[0]) {
    case TRI_EXPECT_GIT_SHA1: return memcmp(git, expect + 1, 20) == 0;
    case TRI_EXPECT_GIT_SHA256: return memcmp(git, expect + 1, 32) == 0;
    case TRI_EXPECT_SHA256:
    case TRI_EXPECT_SHA256_OF_GIT_SHA1:
    case TRI_EXPECT_SHA256_OF_GIT_SHA256: return memcmp(sha256, expect + 1, 32) == 0;
    default: return 0;
  }
}

static void read_file(trigram_job_t *job, size_t index, worker_t *w) {
  uint8_t *rec = job->records + index * TRIGRAM_RECORD;
  if (atomic_load(&job->pairs) >= job->pair_cap) {
    rec[TR_STATUS] = TRI_DEFERRED;
    return;
  }
  if (!seen && !(seen = calloc(SEEN_WORDS, sizeof *seen))) return fail(rec, ENOMEM);
  int fd = open_item(&job->base, index);
  if (fd < 0) return fail(rec, errno);
  struct stat st;
  if (fstat(fd, &st) != 0) {
    fail(rec, errno);
    close(fd);
    return;
  }
  if (!S_ISREG(st.st_mode)) {
    fail(rec, EISDIR);
    close(fd);
    return;
  }
  if ((size_t)st.st_size > job->file_limit) {
    rec[TR_STATUS] = TRI_TOO_LARGE;
    put_f64(rec, TR_SIZE, (double)st.st_size);
    close(fd);
    return;
  }
  if (!worker_reserve(w, CHUNK)) {
    fail(rec, ENOMEM);
    close(fd);
    return;
  }
  uint8_t kind = job->expects[index * TRI_EXPECT_SIZE];
  sha256_ctx sha;
  sha256_init(&sha);
  int with_git = kind == TRI_EXPECT_GIT_SHA1 || kind == TRI_EXPECT_GIT_SHA256;
  git_blob_ctx git_ctx;
  if (with_git) git_blob_start(&git_ctx, kind == TRI_EXPECT_GIT_SHA1 ? GIT_SHA1_BYTES : GIT_SHA256_BYTES, (uint64_t)st.st_size);
  uint64_t size = 0;
  uint32_t carry = 0;
  size_t have = 0, count = 0;
  int binary = 0, ok = 1;
  for (;;) {
    ssize_t got;
    do got = read(fd, w->buf, CHUNK);
    while (got < 0 && errno == EINTR);
    if (got < 0) {
      fail(rec, errno);
      ok = 0;
      break;
    }
    if (got == 0) break;
    size_t n = (size_t)got;
    sha256_update(&sha, w->buf, n);
    if (with_git) git_blob_update(&git_ctx, w->buf, n);
    if (!binary && size < job->sniff) {
      size_t window = job->sniff - size < n ? job->sniff - size : n;
      if (memchr(w->buf, 0, window)) {
        binary = 1;
        forget(count);
        count = 0;
      }
    }
    if (!binary && !collect(w->buf, n, &carry, &have, &count)) {
      fail(rec, ENOMEM);
      ok = 0;
      break;
    }
    size += n;
  }
  close(fd);
  if (!ok) {
    forget(count);
    return;
  }
  uint8_t digest[32], git[32];
  sha256_final(&sha, digest);
  if (with_git) git_blob_final(&git_ctx, git);
  memcpy(rec + TR_SHA256, digest, 32);
  put_f64(rec, TR_SIZE, (double)size);
  if (size != (uint64_t)st.st_size || !verified(job, index, digest, git)) {
    forget(count);
    rec[TR_STATUS] = TRI_MISMATCH;
    return;
  }
  if (binary) {
    rec[TR_STATUS] = TRI_BINARY;
    return;
  }
  uint32_t *list = grouped(count);
  forget(count);
  if (!list) return fail(rec, ENOMEM);
  job->trigrams[index] = list;
  atomic_fetch_add(&job->pairs, count);
  put_f64(rec, TR_COUNT, (double)count);
  rec[TR_STATUS] = TRI_TEXT;
}

/* ---------------------------------------------------------------- the segment */

static int reserve(bytes_t *b, size_t more) { return bytes_reserve(b, more, 1 << 16); }

static void put_u32(uint8_t *at, uint32_t v) {
  at[0] = (uint8_t)v;
  at[1] = (uint8_t)(v >> 8);
  at[2] = (uint8_t)(v >> 16);
  at[3] = (uint8_t)(v >> 24);
}

static size_t varint_len(uint32_t v) { return v < (1u << 7) ? 1 : v < (1u << 14) ? 2 : v < (1u << 21) ? 3 : v < (1u << 28) ? 4 : 5; }

/* Appends one posting list: LEB128 gaps (the first ordinal as is), or a bitmap of the blobs when that is smaller. */
static int encode_list(bytes_t *post, bytes_t *table, uint32_t trigram, const uint32_t *ords, size_t n, size_t blobs) {
  size_t vlen = 0;
  uint32_t prev = 0;
  for (size_t i = 0; i < n; i++) {
    vlen += varint_len(i ? ords[i] - prev : ords[i]);
    prev = ords[i];
  }
  size_t blen = (blobs + 7) / 8;
  int bitmap = vlen > blen;
  if (!reserve(table, 12) || !reserve(post, bitmap ? blen : vlen)) return 0;
  uint8_t *e = table->bytes + table->len;
  put_u32(e, trigram | ((uint32_t)bitmap << 24));
  put_u32(e + 4, (uint32_t)post->len);
  put_u32(e + 8, (uint32_t)n);
  table->len += 12;
  uint8_t *out = post->bytes + post->len;
  if (bitmap) {
    memset(out, 0, blen);
    for (size_t i = 0; i < n; i++) out[ords[i] >> 3] |= (uint8_t)(1u << (ords[i] & 7));
    post->len += blen;
  } else {
    prev = 0;
    for (size_t i = 0; i < n; i++) {
      uint32_t v = i ? ords[i] - prev : ords[i];
      prev = ords[i];
      while (v >= 0x80) {
        *out++ = (uint8_t)(v | 0x80);
        v >>= 7;
      }
      *out++ = (uint8_t)v;
    }
    post->len += vlen;
  }
  return 1;
}

static const trigram_job_t *sorting;

static int by_sha256(const void *a, const void *b) {
  const uint8_t *ra = sorting->records + *(const size_t *)a * TRIGRAM_RECORD + TR_SHA256;
  const uint8_t *rb = sorting->records + *(const size_t *)b * TRIGRAM_RECORD + TR_SHA256;
  int c = memcmp(ra, rb, 32);
  if (c) return c;
  return *(const size_t *)a < *(const size_t *)b ? -1 : *(const size_t *)a > *(const size_t *)b;
}

static double count_of(const trigram_job_t *job, size_t f) {
  double c;
  memcpy(&c, job->records + f * TRIGRAM_RECORD + TR_COUNT, sizeof c);
  return c;
}

/* Builds the segment of the job's indexed files into job->segment; 0 when out of memory. */
static int build_segment(trigram_job_t *job) {
  static pthread_mutex_t sort_lock = PTHREAD_MUTEX_INITIALIZER;
  size_t *order = malloc((job->files ? job->files : 1) * sizeof *order);
  size_t blobs = 0;
  if (!order) return 0;
  for (size_t f = 0; f < job->files; f++) {
    uint8_t s = job->records[f * TRIGRAM_RECORD + TR_STATUS];
    if (s == TRI_TEXT || s == TRI_BINARY) order[blobs++] = f;
  }
  pthread_mutex_lock(&sort_lock);
  sorting = job;
  qsort(order, blobs, sizeof *order, by_sha256);
  pthread_mutex_unlock(&sort_lock);
  /* the same blob twice (two paths): the first stays */
  size_t kept = 0;
  for (size_t k = 0; k < blobs; k++) {
    if (kept && memcmp(job->records + order[kept - 1] * TRIGRAM_RECORD + TR_SHA256, job->records + order[k] * TRIGRAM_RECORD + TR_SHA256, 32) == 0) continue;
    order[kept++] = order[k];
  }
  blobs = kept;
  /* each blob's list as [at, end): `at` moves past a first byte's group once its trigrams are placed */
  const uint32_t **at = malloc((blobs ? blobs : 1) * sizeof *at);
  const uint32_t **end = malloc((blobs ? blobs : 1) * sizeof *end);
  if (at && end)
    for (size_t k = 0; k < blobs; k++) {
      const uint32_t *list = job->trigrams[order[k]];
      at[k] = list;
      end[k] = list ? list + (size_t)count_of(job, order[k]) : list;
    }
  uint32_t *counts = calloc(65536, sizeof *counts);
  uint32_t *starts = malloc(65536 * sizeof *starts);
  uint32_t *ends = malloc(65536 * sizeof *ends);
  uint64_t held[1024] = {0}; /* the last two bytes of the first byte's trigrams, as a bitmap */
  uint32_t *ords = NULL;
  size_t ords_cap = 0;
  bytes_t post = {0}, table = {0};
  int ok = at && end && counts && starts && ends;
  size_t trigrams = 0;
  for (uint32_t b = 0; ok && b < 256; b++) {
    size_t total = 0;
    for (size_t k = 0; k < blobs; k++) {
      /* the lists are far apart and most of a job's are out of the cache: the ones a few blobs on, asked early */
      if (k + PREFETCH < blobs) __builtin_prefetch(at[k + PREFETCH]);
      const uint32_t *e = end[k];
      for (const uint32_t *c = at[k]; c < e && (*c >> 16) == b; c++, total++) {
        uint32_t low = *c & 0xffff;
        counts[low]++;
        held[low >> 6] |= (uint64_t)1 << (low & 63);
      }
    }
    if (total == 0) continue;
    if (total > ords_cap) {
      uint32_t *grown = realloc(ords, total * sizeof *ords);
      if (!grown) {
        ok = 0;
        break;
      }
      ords = grown;
      ords_cap = total;
    }
    /* where each list ends, for the last two bytes held (a bitmap of them: most of the 65,536 are not) */
    uint32_t next = 0;
    for (uint32_t w = 0; w < 1024; w++) {
      for (uint64_t bits = held[w]; bits; bits &= bits - 1) {
        uint32_t low = (w << 6) | (uint32_t)__builtin_ctzll(bits);
        next += counts[low];
        counts[low] = 0;
        starts[low] = next;
        ends[low] = next;
      }
    }
    /*
     * each list is filled from its back, the files taken last to first: it comes out in file order (ascending),
     * and its start moved back to where it begins (a file's trigrams are distinct: no two writes in a row to one)
     */
    for (size_t k = blobs; k-- > 0;) {
      if (k >= PREFETCH) __builtin_prefetch(at[k - PREFETCH]);
      const uint32_t *c = at[k], *e = end[k];
      for (; c < e && (*c >> 16) == b; c++) ords[--starts[*c & 0xffff]] = (uint32_t)k;
      at[k] = c;
    }
    for (uint32_t w = 0; w < 1024; w++) {
      for (uint64_t bits = held[w]; ok && bits; bits &= bits - 1) {
        uint32_t low = (w << 6) | (uint32_t)__builtin_ctzll(bits);
        ok = encode_list(&post, &table, (b << 16) | low, ords + starts[low], ends[low] - starts[low], blobs);
        trigrams++;
      }
      held[w] = 0;
    }
  }
  size_t head = 32, blob_bytes = blobs * 72;
  size_t len = head + blob_bytes + table.len + post.len + 32;
  uint8_t *seg = ok ? malloc(len) : NULL;
  if (seg) {
    memcpy(seg, "WSTRIGR1", 8);
    put_u32(seg + 8, 1);
    put_u32(seg + 12, (uint32_t)blobs);
    put_u32(seg + 16, (uint32_t)trigrams);
    put_u32(seg + 20, 0);
    put_u32(seg + 24, (uint32_t)post.len);
    put_u32(seg + 28, (uint32_t)((uint64_t)post.len >> 32));
    for (size_t k = 0; k < blobs; k++) {
      uint8_t *e = seg + head + k * 72;
      const uint8_t *rec = job->records + order[k] * TRIGRAM_RECORD;
      const uint8_t *expect = job->expects + order[k] * TRI_EXPECT_SIZE;
      double size;
      memcpy(&size, rec + TR_SIZE, sizeof size);
      memcpy(e, rec + TR_SHA256, 32);
      memset(e + 32, 0, 40);
      uint8_t kind = expect[0];
      uint8_t oid_len = kind == TRI_EXPECT_GIT_SHA1 || kind == TRI_EXPECT_SHA256_OF_GIT_SHA1 ? 20 : kind == TRI_EXPECT_GIT_SHA256 || kind == TRI_EXPECT_SHA256_OF_GIT_SHA256 ? 32 : 0;
      memcpy(e + 32, expect + (kind >= TRI_EXPECT_SHA256_OF_GIT_SHA1 ? 33 : 1), oid_len);
      put_u32(e + 64, size >= 4294967295.0 ? 0xffffffffu : (uint32_t)size);
      e[68] = rec[TR_STATUS] == TRI_BINARY ? 1 : 0;
      e[69] = oid_len;
    }
    if (table.len) memcpy(seg + head + blob_bytes, table.bytes, table.len);
    if (post.len) memcpy(seg + head + blob_bytes + table.len, post.bytes, post.len);
    sha256_ctx c;
    sha256_init(&c);
    sha256_update(&c, seg, len - 32);
    sha256_final(&c, seg + len - 32);
    job->segment = seg;
    job->segment_len = len;
  }
  free(order);
  free(at);
  free(end);
  free(counts);
  free(starts);
  free(ends);
  free(ords);
  free(post.bytes);
  free(table.bytes);
  for (size_t f = 0; f < job->files; f++) {
    free(job->trigrams[f]);
    job->trigrams[f] = NULL;
  }
  return seg != NULL;
}

void trigram_job_run(job_t *base, size_t index, worker_t *w) {
  trigram_job_t *job = (trigram_job_t *)base;
  if (index < job->files) return read_file(job, index, w);
  /* the last item: once every file is read (or skipped after a cancel), the segment */
  for (size_t f = 0; f < job->files; f++) {
    while (!atomic_load_explicit(&base->ready[f], memory_order_acquire)) {
      if (atomic_load(&base->cancelled)) return;
      struct timespec pause = {0, 1000000};
      nanosleep(&pause, NULL);
    }
  }
  if (atomic_load(&base->cancelled)) return;
  if (!build_segment(job)) job->segment_errno = ENOMEM;
}

static void trigram_destroy(job_t *base) {
  trigram_job_t *job = (trigram_job_t *)base;
  if (job->trigrams)
    for (size_t f = 0; f < job->files; f++) free(job->trigrams[f]);
  free(job->trigrams);
  free(job->records);
  free(job->expects);
  free(job->segment);
  free(job);
}

trigram_job_t *trigram_job_new(const char *paths, size_t paths_len, size_t files, int dirfd, const uint8_t *expects, size_t file_limit,
                               size_t pair_cap, size_t sniff) {
  trigram_job_t *job = calloc(1, sizeof *job);
  if (!job) return NULL;
  job->base.run = trigram_job_run;
  job->base.destroy = trigram_destroy;
  job->files = files;
  job->file_limit = file_limit;
  job->pair_cap = pair_cap;
  job->sniff = sniff;
  atomic_init(&job->pairs, 0);
  int ok = job_init(&job->base, paths, paths_len, files + 1, dirfd);
  job->expects = malloc((files ? files : 1) * TRI_EXPECT_SIZE);
  job->records = calloc(files ? files : 1, TRIGRAM_RECORD);
  job->trigrams = calloc(files ? files : 1, sizeof *job->trigrams);
  if (!ok || !job->expects || !job->records || !job->trigrams) {
    job_discard(&job->base);
    return NULL;
  }
  if (files) memcpy(job->expects, expects, files * TRI_EXPECT_SIZE);
  return job;
}
