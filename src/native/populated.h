/*
 * Memory for many arrays at once, its pages made present in one call.
 *
 * A page touched for the first time costs a fault; on a virtual machine whose
 * faults trap to the host that is 11-14 µs a page (bench/README.md: 16 MB
 * touched a page at a time took 44-56 ms, the same 16 MB mapped with
 * MAP_POPULATE 2.5-4.5 ms). A 500-file patch's reads and its new bytes were
 * 4,200 such faults. So the arrays of a call that hands many of them to
 * JavaScript are carved out of blocks mapped with MAP_POPULATE, each block
 * freed when the last array carved from it is collected (a reference count:
 * one per array, one for the carver while it carves).
 */
#ifndef WORKSNAP_POPULATED_H
#define WORKSNAP_POPULATED_H

#include <stddef.h>
#include <stdint.h>

typedef struct populated populated_t;

/* A block's reference, dropped: the last one unmaps it. */
void populated_release(populated_t *b);

/* One more reference to a block (a second JavaScript value over the same carved bytes). */
void populated_retain(populated_t *b);

/* Whether `b` is a live block (not some other pointer) and `len` bytes at `at` lie in it. */
int populated_holds(const populated_t *b, const void *at, size_t len);

/* Carves arrays from blocks on one thread, each block larger than the last, from `first` to `most` bytes. */
typedef struct {
  populated_t *block;
  size_t used, next, most;
} carver_t;

static inline carver_t carver_new(size_t first, size_t most) {
  return (carver_t){NULL, 0, first, most};
}

/*
 * `size` bytes (8-byte aligned) from the carver's block, a new one mapped when
 * they do not fit (a size above `most` gets a block of its own): the block
 * they are in is *owner, which the caller releases when done with them. NULL
 * when no block could be mapped (the caller allocates otherwise).
 */
uint8_t *carve(carver_t *c, size_t size, populated_t **owner);

/* Gives back the room past `used` of the last `size` bytes carved at `at` from `owner` (a read shorter than expected). */
void carve_shrink(carver_t *c, populated_t *owner, uint8_t *at, size_t size, size_t used);

/* The carver's own reference dropped: its block goes when its last array does. */
void carver_done(carver_t *c);

#endif
