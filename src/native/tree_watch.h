/*
 * A watch on every directory of a work tree (Linux inotify), kept by a thread
 * of its own, that names the paths changed since it was last asked
 * (src/repo/tree-watch.ts, which answers git's fsmonitor hook with them).
 *
 * The thread adds a watch to each directory before it lists it, so a name
 * created while the tree is walked is either listed or reported; a directory
 * created later is walked when its creation is read. A regular file with more
 * than one link gets a watch of its own (a write through a name outside the
 * tree reaches the file's watches, not its directory's). Anything the watch
 * cannot follow precisely (the kernel's queue overflowed, a directory moved,
 * an unmount, the root replaced) makes it walk the whole tree again and report
 * a reset: every path may have changed.
 */
#ifndef WORKSNAP_TREE_WATCH_H
#define WORKSNAP_TREE_WATCH_H

#include <stddef.h>
#include <stdint.h>

typedef struct tree_watch tree_watch_t;

/* What tree_watch_take reports, beside the paths. */
#define TW_RESET 1  /* every path may have changed since the last take */
#define TW_FAILED 2 /* the watch ended (err says why): nothing it reports can be trusted any more */
#define TW_BUSY 4   /* the thread did not catch up in time: nothing was taken, ask again later */

/*
 * Starts watching `root`; the first walk runs on the watch's thread (tree_watch_take says TW_BUSY until it is
 * done). `shallow` names directories (relative, '/'-separated) watched without their contents: of what
 * happens in one, only a `.gitignore` made, changed or removed there is reported; a directory named ".git" is
 * never watched. At most `max_watches` watches: past them the watch fails with ENOSPC.
 * NULL with *err set when it cannot start.
 */
tree_watch_t *tree_watch_start(const char *root, const char *const *shallow, size_t shallow_count, size_t max_watches, int *err);

/*
 * Waits up to `wait_ms` for the thread to read every event queued before this call (a negative wait: none, what
 * it has read so far is handed over), then hands over the
 * paths reported since the last take (each NUL-terminated, relative to the root; a directory's ends in '/';
 * duplicates possible) in *paths (malloc'd, *len bytes; the caller frees it). Returns TW_* flags; *err is the
 * errno of a failure. Paths past `max_bytes` since the last take are dropped and reported as TW_RESET.
 */
int tree_watch_take(tree_watch_t *w, int wait_ms, size_t max_bytes, uint8_t **paths, size_t *len, int *err);

/* The number of watches held now. */
size_t tree_watch_count(tree_watch_t *w);

/* Stops the thread and frees everything. */
void tree_watch_close(tree_watch_t *w);

#endif
