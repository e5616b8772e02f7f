/*
 * File operations relative to directories held open (directory descriptors),
 * so that a name checked once is never looked up again from the root: a
 * directory swapped for a symlink while a write is under way cannot redirect
 * it (src/repo/dir-handle.ts).
 */
#ifndef WORKSNAP_DIRFD_H
#define WORKSNAP_DIRFD_H

#include <stdint.h>

/* Flags of dirfd_rename, the same values as Linux's renameat2. */
#define WS_RENAME_NOREPLACE 1
#define WS_RENAME_EXCHANGE 2

/*
 * Opens the directory `rel` ('/'-separated names, no "." or ".." segments;
 * "" for `rootfd` itself) beneath `rootfd` without following any symlink on
 * the way: Linux openat2 with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS where the
 * kernel has it, otherwise one openat(O_NOFOLLOW | O_DIRECTORY) per name.
 * The descriptor, or -errno (ELOOP or ENOTDIR: a symlink or a file on the way;
 * ENOENT: a name is missing).
 */
int dirfd_open_beneath(int rootfd, const char *rel);

/*
 * Creates and opens the file `rel` ('/'-separated names as for
 * dirfd_open_beneath, the last one the file's) beneath `rootfd`, no symlink
 * followed on the way or at the end; `flags` must hold O_CREAT (and O_EXCL to
 * refuse an existing entry). The descriptor, or -errno.
 */
int dirfd_create_beneath(int rootfd, const char *rel, int flags, unsigned mode);

/* renameat2 with flags (0, WS_RENAME_NOREPLACE or WS_RENAME_EXCHANGE): 0 or the errno (ENOSYS where the platform cannot). */
int dirfd_rename(int fromfd, const char *from, int tofd, const char *to, int flags);

#endif
