/*
 * "Does this file hold this literal?" is most of grep's work per file. The
 * SIMD versions compare the needle's first and last bytes against 32 (AVX2)
 * or 16 (SSE2) positions at once and check the middle only where both agree
 * (W. Mula's generic SIMD substring search); glibc's memmem, a two-way
 * search, is the portable fallback and handles what is left near the end.
 */
#define _GNU_SOURCE
#include "search.h"

#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#define HAVE_X86 1
#endif

static long long find_memmem(const uint8_t *hay, size_t len, const uint8_t *needle, size_t nlen) {
  const uint8_t *at = memmem(hay, len, needle, nlen);
  return at ? at - hay : -1;
}

/* The rest after a SIMD loop: memmem from offset i (unused where there is no SIMD path). */
__attribute__((unused)) static long long find_tail(const uint8_t *hay, size_t len, size_t i, const uint8_t *needle, size_t nlen) {
  if (i >= len) return -1;
  long long at = find_memmem(hay + i, len - i, needle, nlen);
  return at < 0 ? -1 : (long long)i + at;
}

#ifdef HAVE_X86
__attribute__((target("avx2"))) static long long find_avx2(const uint8_t *hay, size_t len, const uint8_t *needle, size_t nlen) {
  const __m256i first = _mm256_set1_epi8((char)needle[0]);
  const __m256i last = _mm256_set1_epi8((char)needle[nlen - 1]);
  size_t i = 0;
  for (; i + nlen - 1 + 32 <= len; i += 32) {
    __m256i a = _mm256_loadu_si256((const __m256i *)(hay + i));
    __m256i b = _mm256_loadu_si256((const __m256i *)(hay + i + nlen - 1));
    uint32_t mask = (uint32_t)_mm256_movemask_epi8(_mm256_and_si256(_mm256_cmpeq_epi8(a, first), _mm256_cmpeq_epi8(b, last)));
    while (mask) {
      unsigned bit = (unsigned)__builtin_ctz(mask);
      if (memcmp(hay + i + bit + 1, needle + 1, nlen - 2) == 0) return (long long)(i + bit);
      mask &= mask - 1;
    }
  }
  return find_tail(hay, len, i, needle, nlen);
}

static long long find_sse2(const uint8_t *hay, size_t len, const uint8_t *needle, size_t nlen) {
  const __m128i first = _mm_set1_epi8((char)needle[0]);
  const __m128i last = _mm_set1_epi8((char)needle[nlen - 1]);
  size_t i = 0;
  for (; i + nlen - 1 + 16 <= len; i += 16) {
    __m128i a = _mm_loadu_si128((const __m128i *)(hay + i));
    __m128i b = _mm_loadu_si128((const __m128i *)(hay + i + nlen - 1));
    uint32_t mask = (uint32_t)_mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(a, first), _mm_cmpeq_epi8(b, last)));
    while (mask) {
      unsigned bit = (unsigned)__builtin_ctz(mask);
      if (memcmp(hay + i + bit + 1, needle + 1, nlen - 2) == 0) return (long long)(i + bit);
      mask &= mask - 1;
    }
  }
  return find_tail(hay, len, i, needle, nlen);
}
#endif

/*
 * ASCII case-insensitive search for a lowercase needle: a letter matches
 * either case, every other byte only itself (non-ASCII bytes included).
 * Candidates are found as above, with `byte | 0x20` compared where the
 * needle's byte is a letter (of all bytes, only the letter's two cases map to
 * it), and checked through a lowercase table.
 */
static uint8_t lower[256];

__attribute__((unused)) static int is_lower_letter(uint8_t c) { return c >= 'a' && c <= 'z'; }

static int fold_equal(const uint8_t *a, const uint8_t *lower_needle, size_t n) {
  for (size_t k = 0; k < n; k++)
    if (lower[a[k]] != lower_needle[k]) return 0;
  return 1;
}

static long long find_fold_plain(const uint8_t *hay, size_t len, size_t from, const uint8_t *needle, size_t nlen) {
  for (size_t i = from; i + nlen <= len; i++)
    if (lower[hay[i]] == needle[0] && fold_equal(hay + i, needle, nlen)) return (long long)i;
  return -1;
}

#ifdef HAVE_X86
__attribute__((target("avx2"))) static long long find_fold_avx2(const uint8_t *hay, size_t len, const uint8_t *needle, size_t nlen) {
  const __m256i first = _mm256_set1_epi8((char)needle[0]);
  const __m256i last = _mm256_set1_epi8((char)needle[nlen - 1]);
  const __m256i first_or = _mm256_set1_epi8(is_lower_letter(needle[0]) ? 0x20 : 0);
  const __m256i last_or = _mm256_set1_epi8(is_lower_letter(needle[nlen - 1]) ? 0x20 : 0);
  size_t i = 0;
  for (; i + nlen - 1 + 32 <= len; i += 32) {
    __m256i a = _mm256_or_si256(_mm256_loadu_si256((const __m256i *)(hay + i)), first_or);
    __m256i b = _mm256_or_si256(_mm256_loadu_si256((const __m256i *)(hay + i + nlen - 1)), last_or);
    uint32_t mask = (uint32_t)_mm256_movemask_epi8(_mm256_and_si256(_mm256_cmpeq_epi8(a, first), _mm256_cmpeq_epi8(b, last)));
    while (mask) {
      unsigned bit = (unsigned)__builtin_ctz(mask);
      if (fold_equal(hay + i + bit, needle, nlen)) return (long long)(i + bit);
      mask &= mask - 1;
    }
  }
  return find_fold_plain(hay, len, i, needle, nlen);
}

static long long find_fold_sse2(const uint8_t *hay, size_t len, const uint8_t *needle, size_t nlen) {
  const __m128i first = _mm_set1_epi8((char)needle[0]);
  const __m128i last = _mm_set1_epi8((char)needle[nlen - 1]);
  const __m128i first_or = _mm_set1_epi8(is_lower_letter(needle[0]) ? 0x20 : 0);
  const __m128i last_or = _mm_set1_epi8(is_lower_letter(needle[nlen - 1]) ? 0x20 : 0);
  size_t i = 0;
  for (; i + nlen - 1 + 16 <= len; i += 16) {
    __m128i a = _mm_or_si128(_mm_loadu_si128((const __m128i *)(hay + i)), first_or);
    __m128i b = _mm_or_si128(_mm_loadu_si128((const __m128i *)(hay + i + nlen - 1)), last_or);
    uint32_t mask = (uint32_t)_mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(a, first), _mm_cmpeq_epi8(b, last)));
    while (mask) {
      unsigned bit = (unsigned)__builtin_ctz(mask);
      if (fold_equal(hay + i + bit, needle, nlen)) return (long long)(i + bit);
      mask &= mask - 1;
    }
  }
  return find_fold_plain(hay, len, i, needle, nlen);
}
#endif

static long long find_fold_any(const uint8_t *hay, size_t len, const uint8_t *needle, size_t nlen) { return find_fold_plain(hay, len, 0, needle, nlen); }

static long long (*fold_simd)(const uint8_t *, size_t, const uint8_t *, size_t) = find_fold_any;

long long find_fold(const uint8_t *hay, size_t len, const uint8_t *needle, size_t nlen) {
  if (nlen == 0) return 0;
  if (nlen > len) return -1;
  return fold_simd(hay, len, needle, nlen);
}

#ifdef HAVE_X86
__attribute__((target("avx2"))) static size_t count_avx2(const uint8_t *hay, size_t len, uint8_t byte) {
  const __m256i b = _mm256_set1_epi8((char)byte);
  size_t n = 0, i = 0;
  for (; i + 32 <= len; i += 32) n += (size_t)__builtin_popcount((unsigned)_mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)(hay + i)), b)));
  for (; i < len; i++) n += hay[i] == byte;
  return n;
}

__attribute__((target("avx2"))) static size_t after_nth_avx2(const uint8_t *hay, size_t len, uint8_t byte, size_t *n) {
  const __m256i b = _mm256_set1_epi8((char)byte);
  size_t i = 0, after = 0;
  for (; *n > 0 && i + 32 <= len; i += 32) {
    unsigned mask = (unsigned)_mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)(hay + i)), b));
    size_t c = (size_t)__builtin_popcount(mask);
    if (c < *n) {
      *n -= c;
      if (mask) after = i + 32 - (size_t)__builtin_clz(mask);
      continue;
    }
    for (size_t k = 1; k < *n; k++) mask &= mask - 1; /* drop the occurrences before the n-th */
    *n = 0;
    return i + (size_t)__builtin_ctz(mask) + 1;
  }
  for (; *n > 0 && i < len; i++) {
    if (hay[i] == byte) {
      after = i + 1;
      --*n;
    }
  }
  return after;
}

__attribute__((target("avx2"))) static size_t starts_avx2(const uint8_t *hay, size_t len, uint8_t byte, uint32_t *out) {
  const __m256i b = _mm256_set1_epi8((char)byte);
  size_t n = 0, i = 0;
  for (; i + 32 <= len; i += 32) {
    for (unsigned mask = (unsigned)_mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)(hay + i)), b)); mask; mask &= mask - 1) {
      out[n++] = (uint32_t)(i + (size_t)__builtin_ctz(mask) + 1);
    }
  }
  for (; i < len; i++) {
    if (hay[i] == byte) out[n++] = (uint32_t)(i + 1);
  }
  return n;
}
#endif

static size_t starts_plain(const uint8_t *hay, size_t len, uint8_t byte, uint32_t *out) {
  size_t n = 0;
  for (const uint8_t *p = hay, *end = hay + len; (p = memchr(p, byte, (size_t)(end - p))) != NULL; p++) out[n++] = (uint32_t)(p - hay + 1);
  return n;
}

static size_t (*starter)(const uint8_t *, size_t, uint8_t, uint32_t *) = starts_plain;

size_t after_each(const uint8_t *hay, size_t len, uint8_t byte, uint32_t *out) { return starter(hay, len, byte, out); }

size_t line_count(const uint8_t *hay, size_t len) { return count_byte(hay, len, '\n') + (len > 0 && hay[len - 1] != '\n' ? 1 : 0); }

void line_starts(const uint8_t *hay, size_t len, size_t lines, uint32_t *out) {
  out[0] = 0;
  after_each(hay, len, '\n', out + 1);
  out[lines] = (uint32_t)len;
}

static size_t after_nth_plain(const uint8_t *hay, size_t len, uint8_t byte, size_t *n) {
  size_t after = 0;
  for (const uint8_t *p = hay, *end = hay + len; *n > 0 && (p = memchr(p, byte, (size_t)(end - p))) != NULL; p++) {
    after = (size_t)(p - hay) + 1;
    --*n;
  }
  return after;
}

static size_t (*nth)(const uint8_t *, size_t, uint8_t, size_t *) = after_nth_plain;

size_t after_nth(const uint8_t *hay, size_t len, uint8_t byte, size_t *n) { return nth(hay, len, byte, n); }

static size_t count_plain(const uint8_t *hay, size_t len, uint8_t byte) {
  size_t n = 0;
  for (const uint8_t *p = hay, *end = hay + len; (p = memchr(p, byte, (size_t)(end - p))) != NULL; p++) n++;
  return n;
}

static size_t (*counter)(const uint8_t *, size_t, uint8_t) = count_plain;

size_t count_byte(const uint8_t *hay, size_t len, uint8_t byte) { return counter(hay, len, byte); }

size_t longest_run(const uint8_t *hay, size_t len, uint8_t byte) {
  size_t longest = 0;
  const uint8_t *p = hay, *end = hay + len;
  for (;;) {
    const uint8_t *at = memchr(p, byte, (size_t)(end - p));
    size_t run = (size_t)((at ? at : end) - p);
    if (run > longest) longest = run;
    if (!at) return longest;
    p = at + 1;
  }
}

static long long (*simd)(const uint8_t *, size_t, const uint8_t *, size_t) = find_memmem;

void search_select(void) {
  for (int c = 0; c < 256; c++) lower[c] = (uint8_t)(c >= 'A' && c <= 'Z' ? c + 32 : c);
#ifdef HAVE_X86
  __builtin_cpu_init();
  simd = __builtin_cpu_supports("avx2") ? find_avx2 : find_sse2;
  fold_simd = __builtin_cpu_supports("avx2") ? find_fold_avx2 : find_fold_sse2;
  if (__builtin_cpu_supports("avx2")) counter = count_avx2;
  if (__builtin_cpu_supports("avx2")) nth = after_nth_avx2;
  if (__builtin_cpu_supports("avx2")) starter = starts_avx2;
#endif
}

long long find(const uint8_t *hay, size_t len, const uint8_t *needle, size_t nlen) {
  if (nlen == 0) return 0;
  if (nlen > len) return -1;
  if (nlen == 1) {
    const uint8_t *at = memchr(hay, needle[0], len);
    return at ? at - hay : -1;
  }
  return simd(hay, len, needle, nlen);
}
