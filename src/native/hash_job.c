/*
 * Hashing a clean tracked file, as FileHasher.hashClean and hashLarge do in
 * TypeScript (src/repo/hash-files.ts), which stays the fallback (git's blob
 * hash in the job's object format, SHA-1 or SHA-256):
 * - the file is opened without following a symlink and must be a regular file;
 * - up to stream_threshold bytes are read whole; the fstat after the read
 *   gives the ctime, and a file whose size matches and whose ctime is older
 *   than trust_before_ms is trusted to hold its index blob (git compared it
 *   after that moment), so git's blob hash is skipped; otherwise it is
 *   computed over the bytes in hand;
 * - a larger file is streamed: trust is decided from the fstat before the
 *   rest of the read and confirmed by the one after (same size and ctime);
 *   when git's hash was wanted but the size moved, the record says CHANGED.
 * The caller compares git's hash with the index blob id and hands anything
 * that differs back to the TypeScript path, which stores such content.
 */
#include "hash_job.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "files.h"
#include "git_blob.h"
#include "sha256.h"

static void fail(uint8_t *rec, int err) {
  int gone = err == ENOENT || err == ENOTDIR || err == ELOOP || err == EISDIR;
  /* ENXIO: a socket; ESPIPE: pread on a FIFO or socket; EAGAIN: one with nothing to read yet */
  int special = err == ENXIO || err == EAGAIN || err == EWOULDBLOCK || err == ENODEV || err == ESPIPE;
  rec[HR_STATUS] = gone ? HASH_GONE : (err == EACCES || err == EPERM) ? HASH_DENIED : special ? HASH_SPECIAL : HASH_ERROR;
  put_i32(rec, HR_ERRNO, err);
}

/* What is not a regular file: a directory that took the file's place is the file gone; anything else is special. */
static void not_regular(uint8_t *rec, const struct stat *st) {
  if (S_ISDIR(st->st_mode)) return fail(rec, EISDIR);
  rec[HR_STATUS] = HASH_SPECIAL;
  put_i32(rec, HR_ERRNO, 0);
}

static void put_stat(uint8_t *rec, const struct stat *st) {
  rec[HR_EXEC] = (st->st_mode & 0111) ? 1 : 0;
  put_f64(rec, HR_MTIME, stat_ms(ST_MTIME(*st)));
  put_f64(rec, HR_CTIME, stat_ms(ST_CTIME(*st)));
  put_f64(rec, HR_INO, (double)st->st_ino);
}

/* The rest of a file over the threshold; the first `have` bytes are in w->buf. */
static void hash_stream(hash_job_t *job, int fd, worker_t *w, size_t have, uint8_t *rec) {
  struct stat before, after;
  if (fstat(fd, &before) != 0) return fail(rec, errno);
  if (!S_ISREG(before.st_mode)) return not_regular(rec, &before);
  int trustable = stat_ms(ST_CTIME(before)) < atomic_load(&job->trust_before_ms);
  sha256_ctx sha;
  git_blob_ctx git;
  sha256_init(&sha);
  if (!trustable) git_blob_start(&git, job->id_bytes, (uint64_t)before.st_size);
  uint64_t size = 0;
  size_t n = have;
  while (n > 0) {
    sha256_update(&sha, w->buf, n);
    if (!trustable) git_blob_update(&git, w->buf, n);
    size += n;
    ssize_t got;
    do got = pread(fd, w->buf, w->cap, (off_t)size); /* read_upto left the offset at 0 */
    while (got < 0 && errno == EINTR);
    if (got < 0) return fail(rec, errno);
    n = (size_t)got;
  }
  if (fstat(fd, &after) != 0) return fail(rec, errno);
  sha256_final(&sha, rec + HR_SHA256);
  put_stat(rec, &after);
  put_f64(rec, HR_SIZE, (double)size);
  int same_size = size == (uint64_t)before.st_size;
  if (!trustable) {
    if (!same_size) {
      rec[HR_STATUS] = HASH_CHANGED;
      return;
    }
    git_blob_final(&git, rec + HR_GIT);
    rec[HR_HASHED] = 1;
  } else {
    int unchanged = same_size && after.st_size == before.st_size && ST_CTIME(after).tv_sec == ST_CTIME(before).tv_sec &&
                    ST_CTIME(after).tv_nsec == ST_CTIME(before).tv_nsec;
    if (!unchanged) {
      rec[HR_STATUS] = HASH_CHANGED;
      return;
    }
    rec[HR_TRUSTED] = 1;
  }
  rec[HR_STATUS] = HASH_OK;
}

void hash_job_run(job_t *base, size_t index, worker_t *w) {
  hash_job_t *job = (hash_job_t *)base;
  uint8_t *rec = job->records + index * HASH_RECORD;
  int fd = open_item(base, index);
  if (fd < 0) return fail(rec, errno);
  /*
   * No fstat before reading (one syscall per file saved): a directory fails
   * the read with EISDIR, and the fstat after the read rejects anything else
   * that is not a regular file (pread on a FIFO or socket fails with ESPIPE
   * before taking a byte; a device is cut off at the threshold, where
   * hash_stream checks the type), and the record says HASH_SPECIAL.
   */
  struct stat st;
  long long got = read_upto(fd, w, job->stream_threshold, -1);
  if (got < 0) {
    int err = errno;
    /* a read error on something that is not a regular file (ESPIPE: a FIFO or socket) says what it is */
    if (fstat(fd, &st) == 0 && !S_ISREG(st.st_mode)) not_regular(rec, &st);
    else fail(rec, err);
  } else if ((size_t)got > job->stream_threshold) {
    hash_stream(job, fd, w, (size_t)got, rec);
  } else if (fstat(fd, &st) != 0) {
    fail(rec, errno);
  } else if (!S_ISREG(st.st_mode)) {
    not_regular(rec, &st); /* a FIFO or device took the file's place */
  } else {
    size_t len = (size_t)got;
    sha256_ctx sha;
    sha256_init(&sha);
    sha256_update(&sha, w->buf, len);
    sha256_final(&sha, rec + HR_SHA256);
    put_stat(rec, &st);
    put_f64(rec, HR_SIZE, (double)len);
    if ((size_t)st.st_size == len && stat_ms(ST_CTIME(st)) < atomic_load(&job->trust_before_ms)) {
      rec[HR_TRUSTED] = 1;
    } else {
      git_blob_ctx git;
      git_blob_start(&git, job->id_bytes, len);
      git_blob_update(&git, w->buf, len);
      git_blob_final(&git, rec + HR_GIT);
      rec[HR_HASHED] = 1;
    }
    rec[HR_STATUS] = HASH_OK;
  }
  close(fd);
}

static void hash_destroy(job_t *base) {
  hash_job_t *job = (hash_job_t *)base;
  free(job->records);
  free(job);
}

hash_job_t *hash_job_new(const char *paths, size_t paths_len, size_t count, int dirfd, double trust_before_ms, size_t stream_threshold, size_t id_bytes) {
  hash_job_t *job = calloc(1, sizeof *job);
  if (!job) return NULL;
  job->base.run = hash_job_run;
  job->base.destroy = hash_destroy;
  atomic_init(&job->trust_before_ms, trust_before_ms);
  job->stream_threshold = stream_threshold;
  job->id_bytes = id_bytes == GIT_SHA256_BYTES ? GIT_SHA256_BYTES : GIT_SHA1_BYTES;
  int ok = job_init(&job->base, paths, paths_len, count, dirfd);
  job->records = calloc(count ? count : 1, HASH_RECORD);
  if (!ok || !job->records) {
    job_discard(&job->base);
    return NULL;
  }
  return job;
}
