/*
 * SHA-256 (FIPS 180-4). The compression runs with the x86 SHA extensions
 * (sha256rnds2, sha256msg1, sha256msg2) when CPUID reports them, and in
 * portable C otherwise; both are checked against the runtime's own hasher in
 * the tests, over every length around the block and padding boundaries.
 */
#include "sha256.h"

#include <string.h>

#include "cpu.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HAVE_X86 1
#endif

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROTR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static inline uint32_t load_be32(const uint8_t *p) {
  return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

static void compress_portable(uint32_t s[8], const uint8_t *p, size_t blocks) {
  uint32_t w[64];
  while (blocks--) {
    for (int t = 0; t < 16; t++) w[t] = load_be32(p + 4 * t);
    for (int t = 16; t < 64; t++) {
      uint32_t s0 = ROTR(w[t - 15], 7) ^ ROTR(w[t - 15], 18) ^ (w[t - 15] >> 3);
      uint32_t s1 = ROTR(w[t - 2], 17) ^ ROTR(w[t - 2], 19) ^ (w[t - 2] >> 10);
      w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    uint32_t a = s[0], b = s[1], c = s[2], d = s[3], e = s[4], f = s[5], g = s[6], h = s[7];
    for (int t = 0; t < 64; t++) {
      uint32_t t1 = h + (ROTR(e, 6) ^ ROTR(e, 11) ^ ROTR(e, 25)) + ((e & f) ^ (~e & g)) + K[t] + w[t];
      uint32_t t2 = (ROTR(a, 2) ^ ROTR(a, 13) ^ ROTR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    s[0] += a;
    s[1] += b;
    s[2] += c;
    s[3] += d;
    s[4] += e;
    s[5] += f;
    s[6] += g;
    s[7] += h;
    p += 64;
  }
}

#ifdef HAVE_X86
/*
 * Four rounds per step: the message words W[4g..4g+3] live in m[g % 4]; from
 * g = 4 on they are computed from the four groups before them
 * (msg1 adds sigma0, alignr brings W[t-7], msg2 adds sigma1).
 */
__attribute__((target("sha,sse4.1,ssse3"))) static void compress_shani(uint32_t s[8], const uint8_t *p, size_t blocks) {
  const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  __m128i tmp = _mm_loadu_si128((const __m128i *)&s[0]);
  __m128i st1 = _mm_loadu_si128((const __m128i *)&s[4]);
  tmp = _mm_shuffle_epi32(tmp, 0xB1);          /* CDAB */
  st1 = _mm_shuffle_epi32(st1, 0x1B);          /* EFGH */
  __m128i st0 = _mm_alignr_epi8(tmp, st1, 8);  /* ABEF */
  st1 = _mm_blend_epi16(st1, tmp, 0xF0);       /* CDGH */
  while (blocks--) {
    const __m128i abef = st0, cdgh = st1;
    __m128i m[4];
#pragma GCC unroll 16
    for (int g = 0; g < 16; g++) {
      __m128i w;
      if (g < 4) {
        w = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * g)), bswap);
      } else {
        __m128i x = _mm_sha256msg1_epu32(m[g & 3], m[(g + 1) & 3]);
        x = _mm_add_epi32(x, _mm_alignr_epi8(m[(g + 3) & 3], m[(g + 2) & 3], 4));
        w = _mm_sha256msg2_epu32(x, m[(g + 3) & 3]);
      }
      m[g & 3] = w;
      __m128i k = _mm_add_epi32(w, _mm_loadu_si128((const __m128i *)&K[4 * g]));
      st1 = _mm_sha256rnds2_epu32(st1, st0, k);
      k = _mm_shuffle_epi32(k, 0x0E);
      st0 = _mm_sha256rnds2_epu32(st0, st1, k);
    }
    st0 = _mm_add_epi32(st0, abef);
    st1 = _mm_add_epi32(st1, cdgh);
    p += 64;
  }
  tmp = _mm_shuffle_epi32(st0, 0x1B);       /* FEBA */
  st1 = _mm_shuffle_epi32(st1, 0xB1);       /* DCHG */
  st0 = _mm_blend_epi16(tmp, st1, 0xF0);    /* DCBA */
  st1 = _mm_alignr_epi8(st1, tmp, 8);       /* HGFE */
  _mm_storeu_si128((__m128i *)&s[0], st0);
  _mm_storeu_si128((__m128i *)&s[4], st1);
}

#endif

static void (*compress)(uint32_t s[8], const uint8_t *p, size_t blocks) = compress_portable;

void sha256_select(int accelerate) {
  compress = compress_portable;
#ifdef HAVE_X86
  if (accelerate && cpu_has_sha_ni()) compress = compress_shani;
#else
  (void)accelerate;
#endif
}

int sha256_accelerated(void) { return compress != compress_portable; }

void sha256_init(sha256_ctx *c) {
  static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  memcpy(c->state, iv, sizeof iv);
  c->used = 0;
  c->total = 0;
}

void sha256_update(sha256_ctx *c, const void *data, size_t len) {
  const uint8_t *p = data;
  c->total += len;
  if (c->used > 0) {
    size_t take = 64 - c->used < len ? 64 - c->used : len;
    memcpy(c->block + c->used, p, take);
    c->used += take;
    p += take;
    len -= take;
    if (c->used < 64) return;
    compress(c->state, c->block, 1);
    c->used = 0;
  }
  if (len >= 64) {
    compress(c->state, p, len / 64);
    p += len & ~(size_t)63;
    len &= 63;
  }
  if (len > 0) {
    memcpy(c->block, p, len);
    c->used = len;
  }
}

void sha256_final(sha256_ctx *c, uint8_t out[32]) {
  uint64_t bits = c->total * 8;
  uint8_t pad[72] = {0x80};
  size_t padlen = (c->used < 56 ? 56 : 120) - c->used;
  for (int i = 0; i < 8; i++) pad[padlen + i] = (uint8_t)(bits >> (56 - 8 * i));
  uint64_t total = c->total;
  sha256_update(c, pad, padlen + 8);
  c->total = total;
  for (int i = 0; i < 8; i++) {
    out[4 * i] = (uint8_t)(c->state[i] >> 24);
    out[4 * i + 1] = (uint8_t)(c->state[i] >> 16);
    out[4 * i + 2] = (uint8_t)(c->state[i] >> 8);
    out[4 * i + 3] = (uint8_t)c->state[i];
  }
}
