/*
 * The blocks an export's reads go into (scan_job.h, SCAN_KEEP_SLOTS): one per window of files, shared by the job
 * that reads into it, the JavaScript Buffer over it (scanBlock) and the bundle's writer thread, which writes
 * from it without a copy (sink_napi.c borrows the pieces that lie in a live block). Each holder has a reference;
 * the last to let go frees the block, or keeps it as a spare for the next window while an export is on.
 * An import's batches of new files fill blocks too (batchBlock, src/repo/file-batches.ts): the create job
 * writing a batch borrows its block (create_job.h), and the batch fills it again only once the job is done.
 */
#ifndef WORKSNAP_SLOT_BLOCK_H
#define WORKSNAP_SLOT_BLOCK_H

#include <stddef.h>
#include <stdint.h>

typedef struct slot_block {
  _Atomic int refs;
  /* the bytes the slots span */
  size_t len;
  /* the bytes mapped for the block, header included (munmap); 0 when it came from malloc */
  size_t mapped;
  /* the live blocks, for slot_block_borrow */
  struct slot_block *prev, *next;
  uint8_t data[];
} slot_block_t;

/* A job that will use blocks opened / ended: spares are kept from the first opened until the last ended. */
void slot_job_opened(void);
void slot_job_ended(void);

/* A block with room for `len` bytes, holding one reference; NULL when out of memory. */
slot_block_t *slot_block_new(size_t len);

/* Lets go of one reference (any thread). */
void slot_block_release(slot_block_t *b);

/*
 * The live block holding all of [data, data + len), with a reference taken for the caller; NULL when no block
 * holds it.
 */
slot_block_t *slot_block_borrow(const void *data, size_t len);

/* The spares kept now, and their bytes (what an export holds between windows; nothing once it ended). */
void slot_block_spares(size_t *count, size_t *bytes);

#endif
