/*
 * Directory-descriptor operations for the write path (dirfd.h). The kernel
 * interfaces differ: Linux 5.6+ resolves a whole relative path beneath a
 * descriptor in one call (openat2); older kernels and macOS get the same
 * guarantee from a walk that opens one name at a time with O_NOFOLLOW.
 */
#define _GNU_SOURCE
#include "dirfd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#if defined(__linux__)
#include <sys/syscall.h>
#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif
#endif

#ifndef O_CLOEXEC
#define O_CLOEXEC 0
#endif

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

/* One name at a time, never following a symlink: every component is the last one of its own openat. */
static int open_walk(int rootfd, const char *rel) {
  int cur = openat(rootfd, ".", DIR_FLAGS);
  if (cur < 0) return -errno;
  char name[256];
  const char *p = rel;
  while (*p) {
    const char *slash = strchr(p, '/');
    size_t len = slash ? (size_t)(slash - p) : strlen(p);
    if (len == 0 || (len == 1 && p[0] == '.')) {
      p += len + (slash ? 1 : 0);
      continue;
    }
    if (len >= sizeof name || (len == 2 && p[0] == '.' && p[1] == '.')) {
      close(cur);
      return len >= sizeof name ? -ENAMETOOLONG : -EXDEV;
    }
    memcpy(name, p, len);
    name[len] = 0;
    int next = openat(cur, name, DIR_FLAGS);
    int err = errno;
    close(cur);
    if (next < 0) return -err;
    cur = next;
    p += len + (slash ? 1 : 0);
  }
  return cur;
}

#if defined(__linux__) && defined(SYS_openat2)
/* struct open_how and the RESOLVE_ flags, spelled out: building must not need <linux/openat2.h> (Linux 5.6 headers). */
struct ws_open_how {
  uint64_t flags;
  uint64_t mode;
  uint64_t resolve;
};
#define WS_RESOLVE_NO_MAGICLINKS 0x02
#define WS_RESOLVE_NO_SYMLINKS 0x04
#define WS_RESOLVE_BENEATH 0x08
static int openat2_missing = 0;
#endif

int dirfd_open_beneath(int rootfd, const char *rel) {
  if (rel[0] == 0) return open_walk(rootfd, rel);
#if defined(__linux__) && defined(SYS_openat2)
  if (!__atomic_load_n(&openat2_missing, __ATOMIC_RELAXED)) {
    struct ws_open_how how = {.flags = DIR_FLAGS, .mode = 0, .resolve = WS_RESOLVE_BENEATH | WS_RESOLVE_NO_SYMLINKS | WS_RESOLVE_NO_MAGICLINKS};
    for (int attempt = 0; attempt < 8; attempt++) {
      long fd = syscall(SYS_openat2, rootfd, rel, &how, sizeof how);
      if (fd >= 0) return (int)fd;
      /* EAGAIN: a rename elsewhere raced the lookup (the kernel asks for a retry); the walk is as safe. */
      if (errno == EAGAIN || errno == EINTR) continue;
      if (errno == ENOSYS || errno == EPERM || errno == E2BIG) {
        /* no openat2 here (older kernel, or a seccomp filter that refuses it) */
        if (errno == ENOSYS) __atomic_store_n(&openat2_missing, 1, __ATOMIC_RELAXED);
        break;
      }
      return -errno;
    }
  }
#endif
  return open_walk(rootfd, rel);
}

int dirfd_rename(int fromfd, const char *from, int tofd, const char *to, int flags) {
#if defined(__linux__) && defined(SYS_renameat2)
  /* The system call itself: glibc before 2.28 and some other C libraries have no wrapper. */
  unsigned int f = (flags & WS_RENAME_NOREPLACE ? RENAME_NOREPLACE : 0) | (flags & WS_RENAME_EXCHANGE ? RENAME_EXCHANGE : 0);
  if (syscall(SYS_renameat2, fromfd, from, tofd, to, f) == 0) return 0;
  return errno;
#elif defined(__APPLE__) && defined(RENAME_SWAP) && defined(RENAME_EXCL)
  unsigned int f = (flags & WS_RENAME_NOREPLACE ? RENAME_EXCL : 0) | (flags & WS_RENAME_EXCHANGE ? RENAME_SWAP : 0);
  if (renameatx_np(fromfd, from, tofd, to, f) == 0) return 0;
  return errno;
#else
  if (flags != 0) return ENOSYS;
  if (renameat(fromfd, from, tofd, to) == 0) return 0;
  return errno;
#endif
}
