/*
 * A cold capture's read ahead planned from `git ls-files -s -v -z` output
 * straight away, before the TypeScript side has parsed it (listing_plan.c).
 */
#ifndef WORKSNAP_LISTING_PLAN_H
#define WORKSNAP_LISTING_PLAN_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
  /* records that are plain: tag H, stage 0, mode 100644 or 100755, an id of 40 or 64 digits, the first's length */
  size_t plain;
  /* the plain records' ids in hex digits: 40 (SHA-1), 64 (SHA-256), 0 when there is none */
  size_t id_hex;
  /* the first plain record of each id, in listing order */
  size_t leaders;
  /* per plain record, its id's leader (a position among the leaders); plain_count entries */
  int32_t *leader_of;
  /* per leader, its plain record's position among the plain records */
  int32_t *leader_plain;
  /* the leaders' paths, each NUL-terminated, in order */
  char *paths;
  size_t paths_len;
} listing_plan_t;

/* 0 when out of memory (nothing to free then); otherwise free with listing_plan_free. */
int listing_plan(const uint8_t *listing, size_t len, listing_plan_t *out);
void listing_plan_free(listing_plan_t *plan);

/*
 * The records of the same split, for the TypeScript parse (tree-scan.ts): per record kept, LR_FIELDS
 * values: its start, the three spaces' and the tab's offsets, its end (its NUL, or the listing's end),
 * and its path's flags. 1 with *out (free it) and *count set; 0 when out of memory; -1 for a listing
 * of 2 GiB or more (offsets are 32-bit).
 */
#define LR_FIELDS 7
/* the path holds a byte of 0x80 or more (decoded, and checked whole, in TypeScript) */
#define LR_NON_ASCII 1
/* an ASCII path with a name that may fold to a reserved one (checked in TypeScript); never set with LR_NON_ASCII */
#define LR_MAY_BE_RESERVED 2
int listing_records(const uint8_t *listing, size_t len, int32_t **out, size_t *count);

#endif
