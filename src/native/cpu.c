#include "cpu.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

int cpu_has_sha_ni(void) {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
  int sse41 = (c >> 19) & 1, ssse3 = (c >> 9) & 1;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
  return sse41 && ssse3 && ((b >> 29) & 1);
}
#else
int cpu_has_sha_ni(void) { return 0; }
#endif
