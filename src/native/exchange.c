/*
 * Swaps two names in one step: after it, `b` names what `a` named and the
 * reverse. The write path publishes a staged file over an existing one this
 * way, so the old file is not freed while the caller waits (it stays under
 * the staged name until it is removed later); a crash at any moment leaves
 * each name with one whole file.
 */
#define _GNU_SOURCE
#include "exchange.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#if defined(__linux__)
#include <sys/syscall.h>
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif
#endif

int exchange_paths(const char *a, const char *b) {
#if defined(__linux__) && defined(SYS_renameat2)
  /* The system call itself: glibc before 2.28 and some other C libraries have no wrapper. */
  if (syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) == 0) return 0;
  return errno;
#elif defined(__APPLE__) && defined(RENAME_SWAP)
  if (renamex_np(a, b, RENAME_SWAP) == 0) return 0;
  return errno;
#else
  (void)a;
  (void)b;
  return ENOSYS;
#endif
}
