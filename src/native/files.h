/* Shared by the jobs: reading a file, its stat fields as JavaScript sees them, records. */
#ifndef WORKSNAP_FILES_H
#define WORKSNAP_FILES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "pool.h"

/* The stat timestamps by name on every platform (macOS calls them st_mtimespec and st_ctimespec). */
#ifdef __APPLE__
#define ST_MTIME(st) ((st).st_mtimespec)
#define ST_CTIME(st) ((st).st_ctimespec)
#else
#define ST_MTIME(st) ((st).st_mtim)
#define ST_CTIME(st) ((st).st_ctim)
#endif

/* Milliseconds since the epoch, as Node's mtimeMs and ctimeMs. */
static inline double stat_ms(struct timespec t) { return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6; }

static inline void put_f64(uint8_t *rec, size_t at, double v) { memcpy(rec + at, &v, sizeof v); }
static inline void put_i32(uint8_t *rec, size_t at, int32_t v) { memcpy(rec + at, &v, sizeof v); }

/*
 * Opens a path of the job without following a symlink, waiting on a FIFO or
 * taking a terminal; -1 with errno (ENXIO for a socket).
 */
int open_item(job_t *job, size_t index);
/*
 * Reads from offset 0 until EOF or more than `limit` bytes are in w->buf;
 * the count, or -1 with errno. With `expect` (the size an fstat gave; -1 when
 * unknown), a short read that reaches it is taken for EOF, saving the read
 * that would return 0: a file that grows meanwhile is read as it was at the
 * fstat. It reads with pread, so a FIFO or socket fails with ESPIPE before
 * a byte is taken from it, and the descriptor's offset does not move:
 * callers that go on reading continue with pread from the count.
 */
long long read_upto(int fd, worker_t *w, size_t limit, long long expect);
/* pread, again when a signal interrupted it: the count read (0 at the end) or -errno. */
ssize_t pread_again(int fd, void *buf, size_t len, off_t offset);
/*
 * Reads a regular file from offset 0 into a new buffer (malloc) of `size` + 1 bytes, `size` being what fstat
 * said: the one byte more sees the end in the same read. 0 with *data and *len when the file held at most
 * `size` bytes; 1 when it holds more (then *data holds its first `size` + 1 bytes and *len says so, for the
 * caller to read on with pread or to free); -errno when a read failed or memory ran out (nothing allocated).
 */
int read_sized(int fd, size_t size, uint8_t **data, size_t *len);
/* Wall-clock milliseconds since the epoch. */
double now_ms(void);

#endif
