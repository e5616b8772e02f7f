/* Substring search: whether a needle occurs in a buffer, with SIMD where the CPU has it. */
#ifndef WORKSNAP_SEARCH_H
#define WORKSNAP_SEARCH_H

#include <stddef.h>
#include <stdint.h>

/* Picks the implementation once: AVX2, SSE2 or memmem. */
void search_select(void);
/* Offset of the first occurrence of `needle` (of `nlen` bytes; empty occurs at 0) in `hay`, or -1. */
long long find(const uint8_t *hay, size_t len, const uint8_t *needle, size_t nlen);
/* The same, ASCII case-insensitively: `needle` is lowercase; a letter matches either case, other bytes themselves. */
long long find_fold(const uint8_t *hay, size_t len, const uint8_t *needle, size_t nlen);
/* How many times `byte` occurs in `hay`. */
size_t count_byte(const uint8_t *hay, size_t len, uint8_t byte);
/*
 * The offset just after the n-th occurrence of `byte` in `hay` (*n >= 1), *n
 * then 0; with fewer occurrences, the offset after the last one (0: none) and
 * *n less the number found.
 */
size_t after_nth(const uint8_t *hay, size_t len, uint8_t byte, size_t *n);
/* The offset just after each occurrence of `byte` in `hay` (len < 4 GiB), in order, into `out` (room for
 * count_byte's number); returns how many. */
size_t after_each(const uint8_t *hay, size_t len, uint8_t byte, uint32_t *out);
/* How many lines `hay` holds: its newlines, and one more for a last line without one. */
size_t line_count(const uint8_t *hay, size_t len);
/* Where each of its `lines` lines (line_count) starts, then `len`: lines + 1 offsets into `out` (len < 4 GiB). */
void line_starts(const uint8_t *hay, size_t len, size_t lines, uint32_t *out);
/* The longest stretch of `hay` without `byte` (a line's length, for `\n`). */
size_t longest_run(const uint8_t *hay, size_t len, uint8_t byte);
/* 1 when `needle` occurs in `hay`. */
static inline int contains(const uint8_t *hay, size_t len, const uint8_t *needle, size_t nlen) { return find(hay, len, needle, nlen) >= 0; }

#endif
