/* SHA-1 (FIPS 180-4) in portable C: used only to check a file against its git blob id. */
#include "sha1.h"

#include <stdio.h>
#include <string.h>

#include "cpu.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HAVE_X86 1
#endif

#define ROTL(x, n) (((x) << (n)) | ((x) >> (32 - (n))))

static void compress_one(uint32_t s[5], const uint8_t *p);

static void compress_portable(uint32_t s[5], const uint8_t *p, size_t blocks) {
  for (; blocks > 0; blocks--, p += 64) compress_one(s, p);
}

#ifdef HAVE_X86
/*
 * Four rounds per step with the x86 SHA extensions. Words sit in reverse lane
 * order (A, and W[4g], in the top lane). W[4g..4g+3] for g >= 4 is
 * msg2(msg1(W[g-4], W[g-3]) ^ W[g-2], W[g-1]); E for a step is nexte of the
 * state before the previous step and the step's words.
 */
#define SHA1_STEP(g, f)                                                                              \
  do {                                                                                               \
    if ((g) < 4) {                                                                                   \
      m[(g) & 3] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * (g))), bswap);         \
    } else {                                                                                         \
      __m128i x = _mm_xor_si128(_mm_sha1msg1_epu32(m[(g) & 3], m[((g) + 1) & 3]), m[((g) + 2) & 3]); \
      m[(g) & 3] = _mm_sha1msg2_epu32(x, m[((g) + 3) & 3]);                                          \
    }                                                                                                \
    e = (g) == 0 ? _mm_add_epi32(e0, m[0]) : _mm_sha1nexte_epu32(prev, m[(g) & 3]);                  \
    prev = abcd;                                                                                     \
    abcd = _mm_sha1rnds4_epu32(abcd, e, f);                                                          \
  } while (0)

__attribute__((target("sha,sse4.1,ssse3"))) static void compress_shani(uint32_t s[5], const uint8_t *p, size_t blocks) {
  const __m128i bswap = _mm_set_epi64x(0x0001020304050607ULL, 0x08090a0b0c0d0e0fULL);
  __m128i abcd = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)s), 0x1B);
  __m128i e0 = _mm_set_epi32((int)s[4], 0, 0, 0);
  for (; blocks > 0; blocks--, p += 64) {
    const __m128i abcd_save = abcd, e0_save = e0;
    __m128i m[4], e, prev = abcd;
    SHA1_STEP(0, 0); SHA1_STEP(1, 0); SHA1_STEP(2, 0); SHA1_STEP(3, 0); SHA1_STEP(4, 0);
    SHA1_STEP(5, 1); SHA1_STEP(6, 1); SHA1_STEP(7, 1); SHA1_STEP(8, 1); SHA1_STEP(9, 1);
    SHA1_STEP(10, 2); SHA1_STEP(11, 2); SHA1_STEP(12, 2); SHA1_STEP(13, 2); SHA1_STEP(14, 2);
    SHA1_STEP(15, 3); SHA1_STEP(16, 3); SHA1_STEP(17, 3); SHA1_STEP(18, 3); SHA1_STEP(19, 3);
    e0 = _mm_sha1nexte_epu32(prev, e0_save);
    abcd = _mm_add_epi32(abcd, abcd_save);
  }
  _mm_storeu_si128((__m128i *)s, _mm_shuffle_epi32(abcd, 0x1B));
  s[4] = (uint32_t)_mm_extract_epi32(e0, 3);
}

#endif

static void (*compress)(uint32_t s[5], const uint8_t *p, size_t blocks) = compress_portable;

void sha1_select(int accelerate) {
  compress = compress_portable;
#ifdef HAVE_X86
  if (accelerate && cpu_has_sha_ni()) compress = compress_shani;
#else
  (void)accelerate;
#endif
}

int sha1_accelerated(void) { return compress != compress_portable; }

static void compress_one(uint32_t s[5], const uint8_t *p) {
  uint32_t w[80];
  for (int t = 0; t < 16; t++) w[t] = ((uint32_t)p[4 * t] << 24) | ((uint32_t)p[4 * t + 1] << 16) | ((uint32_t)p[4 * t + 2] << 8) | p[4 * t + 3];
  for (int t = 16; t < 80; t++) w[t] = ROTL(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);
  uint32_t a = s[0], b = s[1], c = s[2], d = s[3], e = s[4];
  for (int t = 0; t < 80; t++) {
    uint32_t f, k;
    if (t < 20) {
      f = (b & c) | (~b & d);
      k = 0x5a827999;
    } else if (t < 40) {
      f = b ^ c ^ d;
      k = 0x6ed9eba1;
    } else if (t < 60) {
      f = (b & c) | (b & d) | (c & d);
      k = 0x8f1bbcdc;
    } else {
      f = b ^ c ^ d;
      k = 0xca62c1d6;
    }
    uint32_t tmp = ROTL(a, 5) + f + e + k + w[t];
    e = d;
    d = c;
    c = ROTL(b, 30);
    b = a;
    a = tmp;
  }
  s[0] += a;
  s[1] += b;
  s[2] += c;
  s[3] += d;
  s[4] += e;
}

void sha1_init(sha1_ctx *c) {
  static const uint32_t iv[5] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0};
  memcpy(c->state, iv, sizeof iv);
  c->used = 0;
  c->total = 0;
}

void sha1_update(sha1_ctx *c, const void *data, size_t len) {
  const uint8_t *p = data;
  c->total += len;
  while (len > 0) {
    if (c->used == 0 && len >= 64) {
      compress(c->state, p, len / 64);
      p += len & ~(size_t)63;
      len &= 63;
      continue;
    }
    size_t take = 64 - c->used < len ? 64 - c->used : len;
    memcpy(c->block + c->used, p, take);
    c->used += take;
    p += take;
    len -= take;
    if (c->used == 64) {
      compress(c->state, c->block, 1);
      c->used = 0;
    }
  }
}

void sha1_final(sha1_ctx *c, uint8_t out[20]) {
  uint64_t bits = c->total * 8;
  uint8_t pad[72] = {0x80};
  size_t padlen = (c->used < 56 ? 56 : 120) - c->used;
  for (int i = 0; i < 8; i++) pad[padlen + i] = (uint8_t)(bits >> (56 - 8 * i));
  sha1_update(c, pad, padlen + 8);
  for (int i = 0; i < 5; i++) {
    out[4 * i] = (uint8_t)(c->state[i] >> 24);
    out[4 * i + 1] = (uint8_t)(c->state[i] >> 16);
    out[4 * i + 2] = (uint8_t)(c->state[i] >> 8);
    out[4 * i + 3] = (uint8_t)c->state[i];
  }
}

void git_blob_init(sha1_ctx *c, uint64_t size) {
  char header[32];
  int n = snprintf(header, sizeof header, "blob %llu", (unsigned long long)size);
  sha1_init(c);
  sha1_update(c, header, (size_t)n + 1); /* with the NUL */
}
