/* Atomic exchange of two paths (Linux renameat2 RENAME_EXCHANGE; macOS renamex_np RENAME_SWAP). */
#ifndef WORKSNAP_EXCHANGE_H
#define WORKSNAP_EXCHANGE_H

/* 0 when `a` and `b` swapped names, else the errno (ENOSYS where the platform has no exchange). */
int exchange_paths(const char *a, const char *b);

#endif
