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
#include <stdlib.h>
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

/*
 * `rel` opened beneath `rootfd` by openat2 without following any symlink: 1 with the descriptor or -errno in
 * *out, or 0 when openat2 is not there (another platform, an older kernel, a seccomp filter that refuses it,
 * or a rename elsewhere racing every retry): then the caller walks, which is as safe.
 */
static int open_beneath_at2(int rootfd, const char *rel, int flags, unsigned mode, int *out) {
#if defined(__linux__) && defined(SYS_openat2)
  /* WORKSNAP_OPENAT2=0 takes the walk, as a kernel without openat2 does (its tests run both ways) */
  static int env_read = 0;
  if (!__atomic_load_n(&env_read, __ATOMIC_ACQUIRE)) {
    const char *v = getenv("WORKSNAP_OPENAT2");
    if (v && strcmp(v, "0") == 0) __atomic_store_n(&openat2_missing, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&env_read, 1, __ATOMIC_RELEASE);
  }
  if (__atomic_load_n(&openat2_missing, __ATOMIC_RELAXED)) return 0;
  struct ws_open_how how = {.flags = (uint64_t)flags, .mode = mode, .resolve = WS_RESOLVE_BENEATH | WS_RESOLVE_NO_SYMLINKS | WS_RESOLVE_NO_MAGICLINKS};
  for (int attempt = 0; attempt < 8; attempt++) {
    long fd = syscall(SYS_openat2, rootfd, rel, &how, sizeof how);
    if (fd >= 0) {
      *out = (int)fd;
      return 1;
    }
    /* EAGAIN: a rename elsewhere raced the lookup (the kernel asks for a retry) */
    if (errno == EAGAIN || errno == EINTR) continue;
    if (errno == ENOSYS || errno == EPERM || errno == E2BIG) {
      if (errno == ENOSYS) __atomic_store_n(&openat2_missing, 1, __ATOMIC_RELAXED);
      return 0;
    }
    *out = -errno;
    return 1;
  }
#else
  (void)rootfd, (void)rel, (void)flags, (void)mode, (void)out;
#endif
  return 0;
}

int dirfd_open_beneath(int rootfd, const char *rel) {
  int fd;
  if (rel[0] != 0 && open_beneath_at2(rootfd, rel, DIR_FLAGS, 0, &fd)) return fd;
  return open_walk(rootfd, rel);
}

int dirfd_create_beneath(int rootfd, const char *rel, int flags, unsigned mode) {
  flags |= O_NOFOLLOW | O_CLOEXEC;
  int got;
  if (open_beneath_at2(rootfd, rel, flags, mode, &got)) return got;
  /* the directories by the walk, then the file by its last name, itself never a symlink (O_NOFOLLOW) */
  const char *slash = strrchr(rel, '/');
  int dirfd = rootfd, opened = -1;
  if (slash) {
    char dir[4096];
    size_t len = (size_t)(slash - rel);
    if (len >= sizeof dir) return -ENAMETOOLONG;
    memcpy(dir, rel, len);
    dir[len] = 0;
    opened = dirfd_open_beneath(rootfd, dir);
    if (opened < 0) return opened;
    dirfd = opened;
  }
  int fd;
  do fd = openat(dirfd, slash ? slash + 1 : rel, flags, (mode_t)mode);
  while (fd < 0 && errno == EINTR);
  int err = errno;
  if (opened >= 0) close(opened);
  return fd < 0 ? -err : fd;
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
