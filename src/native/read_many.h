/* Many files of held directories read at once (dir-handle.ts readMany), spread over a few threads the call starts and joins. */
#ifndef WORKSNAP_READ_MANY_H
#define WORKSNAP_READ_MANY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "populated.h"

typedef struct {
  /* in: the directory's descriptor and the entry's name (one component) */
  int dirfd;
  const char *name;
  /* out: 0, or the errno of lstat (ENOENT: absent) */
  int lstat_err;
  struct stat lstat;
  /* out, for a regular file by lstat: 0 or the open's errno (positive), -errno when fstat or a read failed */
  int read_err;
  /* whether the open and fstat happened (fstat holds the opened file's numbers) */
  int opened;
  struct stat fstat;
  /* the bytes to the end when the opened file is regular (NULL for none): in `owner`'s block (populated.h: the
     caller releases it), or malloc'd when owner is NULL (the caller frees them) */
  uint8_t *data;
  size_t len;
  populated_t *owner;
  /* the SHA-256 of those bytes, hashed by the thread that read them while they are in its cache */
  uint8_t digest[32];
} read_item_t;

/*
 * For each item: lstat of the name (a symlink is not followed); when that is a
 * regular file, the name opened with `flags` (O_CLOEXEC added), its fstat, and
 * when that is a regular file, its bytes read to the end (a file longer than
 * its fstat said read whole), and hashed. Up to `threads` threads, the calling
 * one included, each taking the next item, each carving its files' bytes out
 * of populated blocks (populated.h) when `populate` is not 0. Returns -1 when
 * memory ran out for a file (that item has read_err -ENOMEM), else 0.
 */
int read_many(read_item_t *items, size_t n, int flags, int threads, int populate);

/*
 * Reads `fd` to its end into a malloc'd buffer (`size` bytes expected, one
 * more allocated to see the end in the same read; a file longer than that is
 * read whole in a growing buffer): 0 with *data and *len set, or -errno
 * (-ENOMEM when memory ran out).
 */
int read_fd_to_end(int fd, size_t size, uint8_t **data, size_t *len);

/*
 * read_fd_to_end into a populated block of its own (populated.h), *owner (the caller releases it); *owner NULL
 * when the bytes are malloc'd instead (no block could be mapped, or the file grew since its fstat).
 */
int read_fd_populated(int fd, size_t size, uint8_t **data, size_t *len, populated_t **owner);

#endif
