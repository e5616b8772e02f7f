/*
 * A file written in order on a thread of its own, hashed (SHA-256) as it is
 * written: the JavaScript thread hands over pieces (copied, or borrowed from
 * an export's blocks of reads) and carries on building the next ones; the
 * writes, and the digest of everything written, happen meanwhile. Writeback
 * to the disk is started as it goes (sync_file_range, where there is one),
 * and a regular file is synced behind the writes on a thread of its own, so
 * the fsync that makes the file durable has little left to wait for. What an
 * export bundle is written through (src/repo/atomic-stream.ts).
 */
#ifndef WORKSNAP_SINK_H
#define WORKSNAP_SINK_H

#include <stddef.h>
#include <stdint.h>

typedef struct sink sink_t;

/*
 * A sink writing to `fd` (not owned: the caller closes it after sink_free); NULL when out of memory or no thread.
 * The digest covers `prefix` (not written; may be NULL) before the bytes written; writeback is started every
 * `writeback_step` bytes (0: the default, 8 MiB), and with `durable_steps` each step is synced (fdatasync) by the
 * writing thread; without, a regular file is synced every 32 MiB by a thread of its own while the writes go on.
 */
sink_t *sink_open(int fd, const void *prefix, size_t prefix_len, uint64_t writeback_step, int durable_steps);
typedef struct {
  const void *data;
  size_t len;
  /*
   * NULL: the bytes are copied. Otherwise the piece is borrowed: written from where it is, which must not change,
   * and `release(owner)` called on the sink's thread once it is written (or dropped).
   */
  void (*release)(void *owner);
  void *owner;
} sink_piece_t;

/*
 * Queues the pieces' bytes, in order: a copy of each (gathered in the sink's own memory, which it reuses once
 * written), or the piece itself when borrowed. 0 when out of memory (what was queued before that stays queued;
 * the borrowed pieces not queued are let go). Returns the bytes queued and not yet written through *queued.
 */
int sink_writev(sink_t *s, const sink_piece_t *pieces, size_t n, size_t *queued);
/* Lets go of the borrowed pieces among `pieces` (ones that were never queued). */
void sink_pieces_release(const sink_piece_t *pieces, size_t n);
/* No more pieces: the thread finishes what is queued, then computes the digest. */
void sink_close(sink_t *s);
/* 1 once closed and everything queued written (or a write failed): then errno (0 if none), bytes written and the digest. */
int sink_done(sink_t *s, int *err, uint64_t *written, uint8_t digest[32]);
/* Bytes queued and not yet written. */
size_t sink_queued(sink_t *s);
/* Closes the sink if needed, waits for its thread, frees it. */
void sink_free(sink_t *s);

#endif
