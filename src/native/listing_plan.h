/*
 * A cold capture's read ahead planned from `git ls-files -s -v -z` output
 * straight away, before the TypeScript side has parsed it (listing_plan.c).
 */
#ifndef WORKSNAP_LISTING_PLAN_H
#define WORKSNAP_LISTING_PLAN_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
  /* records that are plain: tag H, stage 0, mode 100644 or 100755, a 40-digit id */
  size_t plain;
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

#endif
