/* A work tree watched with inotify by a thread of its own (tree_watch.h). */
#define _GNU_SOURCE
#include "tree_watch.h"

#include "bytes.h"

#include <errno.h>
#include <stdlib.h>

#ifndef __linux__

tree_watch_t *tree_watch_start(const char *root, const char *const *shallow, size_t shallow_count, size_t max_watches, int *err) {
  (void)root;
  (void)shallow;
  (void)shallow_count;
  (void)max_watches;
  *err = ENOSYS;
  return NULL;
}
int tree_watch_take(tree_watch_t *w, int wait_ms, size_t max_bytes, uint8_t **paths, size_t *len, int *err) {
  (void)w;
  (void)wait_ms;
  (void)max_bytes;
  *paths = NULL;
  *len = 0;
  *err = ENOSYS;
  return TW_FAILED;
}
size_t tree_watch_count(tree_watch_t *w) {
  (void)w;
  return 0;
}
void tree_watch_close(tree_watch_t *w) { (void)w; }

#else

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <pthread.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DIR_MASK                                                                                                 \
  (IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_DELETE_SELF | \
   IN_MOVE_SELF | IN_DONT_FOLLOW | IN_ONLYDIR | IN_EXCL_UNLINK)
#define FILE_MASK (IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_DONT_FOLLOW)
/* wds past this make the watch start over with a new descriptor (its wds count from 1 again) */
#define MAX_WD (1 << 22)

typedef struct {
  char *path; /* relative to the root, "" for the root itself; NULL: no watch */
  int is_dir;
} slot_t;


struct tree_watch {
  char *root;
  size_t root_len;
  dev_t dev;
  char **shallow;
  size_t shallow_count;
  size_t max_watches;

  /* owned by the thread */
  int ifd;
  int wake;
  slot_t *slots;
  size_t slot_cap;
  size_t watches;
  int need_reset;
  pthread_t thread;

  /* shared, under mu */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  uint64_t asked, answered;
  int ready, failed, failed_err, reset;
  atomic_int stop; /* read by a walk between directories too: a close never waits for a whole walk */
  bytes_t out;
  size_t max_bytes;
  size_t watches_seen; /* w->watches as of the thread's last answer */
  int overflowed;
};

/* Records `dir` + "/" + `name` (either may be empty), '/' appended for a directory; under mu. */
static void report(tree_watch_t *w, const char *dir, const char *name, int is_dir) {
  size_t dl = strlen(dir), nl = name ? strlen(name) : 0;
  size_t need = dl + (dl && nl ? 1 : 0) + nl + (is_dir ? 1 : 0) + 1;
  pthread_mutex_lock(&w->mu);
  if (w->out.len + need > w->max_bytes || !bytes_reserve(&w->out, need, 4096)) {
    w->overflowed = 1;
  } else {
    uint8_t *p = w->out.bytes + w->out.len;
    memcpy(p, dir, dl);
    p += dl;
    if (dl && nl) *p++ = '/';
    if (nl) memcpy(p, name, nl);
    p += nl;
    if (is_dir && (dl || nl)) *p++ = '/';
    *p++ = 0;
    w->out.len = (size_t)(p - w->out.bytes);
  }
  pthread_mutex_unlock(&w->mu);
}

static char *join(const char *dir, const char *name) {
  size_t dl = strlen(dir), nl = strlen(name);
  char *s = malloc(dl + nl + 2);
  if (!s) return NULL;
  memcpy(s, dir, dl);
  size_t at = dl;
  if (dl) s[at++] = '/';
  memcpy(s + at, name, nl + 1);
  return s;
}

/* The absolute path of `rel` into buf; 0 when it does not fit. */
static int absolute(tree_watch_t *w, const char *rel, char *buf, size_t cap) {
  int n = *rel ? snprintf(buf, cap, "%s/%s", w->root, rel) : snprintf(buf, cap, "%s", w->root);
  return n > 0 && (size_t)n < cap;
}

static void drop_slots(tree_watch_t *w) {
  for (size_t i = 0; i < w->slot_cap; i++) free(w->slots[i].path);
  free(w->slots);
  w->slots = NULL;
  w->slot_cap = 0;
  w->watches = 0;
}

/* Puts `path` (taken) in the slot of wd; 0 on failure (path freed). */
static int keep(tree_watch_t *w, int wd, char *path, int is_dir) {
  if (wd <= 0 || wd >= MAX_WD) {
    free(path);
    return 0;
  }
  if ((size_t)wd >= w->slot_cap) {
    size_t cap = w->slot_cap ? w->slot_cap : 1024;
    while (cap <= (size_t)wd) cap *= 2;
    slot_t *s = realloc(w->slots, cap * sizeof *s);
    if (!s) {
      free(path);
      return 0;
    }
    memset(s + w->slot_cap, 0, (cap - w->slot_cap) * sizeof *s);
    w->slots = s;
    w->slot_cap = cap;
  }
  slot_t *s = &w->slots[wd];
  if (s->path) free(s->path);
  else w->watches++;
  s->path = path;
  s->is_dir = is_dir;
  return 1;
}

static int by_bytes(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int is_shallow(tree_watch_t *w, const char *rel) {
  return w->shallow_count > 0 && bsearch(&rel, w->shallow, w->shallow_count, sizeof *w->shallow, by_bytes) != NULL;
}

/* The error that ends the watch, or 0 */
typedef int fatal_t;

/*
 * A regular file `name` of the directory at `rel`, found as `at` relative to `dfd` (its name in an open directory,
 * or its absolute path with AT_FDCWD): watched on its own when it has another link.
 */
static fatal_t watch_linked(tree_watch_t *w, int dfd, const char *at, const char *rel, const char *name) {
  struct stat st;
  if (fstatat(dfd, at, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) || st.st_nlink < 2) return 0;
  char *path = join(rel, name);
  char abs[PATH_MAX];
  if (!path) return ENOMEM;
  if (!absolute(w, path, abs, sizeof abs)) {
    free(path);
    return ENAMETOOLONG;
  }
  if (w->watches >= w->max_watches) {
    free(path);
    return ENOSPC;
  }
  int wd = inotify_add_watch(w->ifd, abs, FILE_MASK);
  if (wd < 0) {
    int e = errno;
    free(path);
    return e == ENOENT || e == ENOTDIR || e == ELOOP ? 0 : e;
  }
  return keep(w, wd, path, 0) ? 0 : ENOMEM;
}

/*
 * Watches the directory `start` (relative) and every directory below it, each watched before it is listed.
 * `report_all`: every name found is reported (a directory that appeared after the first walk). A directory
 * that vanished or became something else meanwhile is skipped (its parent's watch reports it).
 */
static fatal_t walk(tree_watch_t *w, const char *start, int report_all) {
  size_t cap = 64, n = 0;
  char **stack = malloc(cap * sizeof *stack);
  if (!stack) return ENOMEM;
  stack[n] = strdup(start);
  if (!stack[n]) {
    free(stack);
    return ENOMEM;
  }
  n++;
  fatal_t fatal = 0;
  char abs[PATH_MAX];
  while (n > 0 && !fatal) {
    if (atomic_load_explicit(&w->stop, memory_order_relaxed)) {
      fatal = ECANCELED;
      break;
    }
    char *rel = stack[--n];
    if (!absolute(w, rel, abs, sizeof abs)) {
      fatal = ENAMETOOLONG;
      free(rel);
      break;
    }
    if (w->watches >= w->max_watches) {
      fatal = ENOSPC;
      free(rel);
      break;
    }
    int wd = inotify_add_watch(w->ifd, abs, DIR_MASK);
    if (wd < 0) {
      int e = errno;
      if (!(e == ENOENT || e == ENOTDIR || e == ELOOP) || !*rel) fatal = e;
      free(rel);
      continue;
    }
    int dfd = open(abs, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (dfd < 0 || fstat(dfd, &st) != 0) {
      int e = errno;
      if (dfd >= 0) close(dfd);
      /* gone, or not readable (git cannot list it either and says so): kept watched for its changes */
      if (!(e == ENOENT || e == ENOTDIR || e == ELOOP || e == EACCES) || !*rel) fatal = e;
      if (!keep(w, wd, rel, 1) && !fatal) fatal = ENOMEM;
      continue;
    }
    if (st.st_dev != w->dev) {
      /* another file system inside the tree: its changes may come from elsewhere */
      close(dfd);
      free(rel);
      fatal = EXDEV;
      break;
    }
    char *mine = strdup(rel);
    if (!mine || !keep(w, wd, mine, 1)) {
      close(dfd);
      free(rel);
      fatal = ENOMEM;
      break;
    }
    if (is_shallow(w, rel)) {
      close(dfd);
      free(rel);
      continue;
    }
    DIR *d = fdopendir(dfd);
    if (!d) {
      close(dfd);
      free(rel);
      fatal = errno;
      break;
    }
    struct dirent *e;
    while (!fatal && (e = readdir(d)) != NULL) {
      const char *name = e->d_name;
      if (name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0))) continue;
      unsigned char type = e->d_type;
      if (type == DT_UNKNOWN) {
        struct stat cst;
        if (fstatat(dirfd(d), name, &cst, AT_SYMLINK_NOFOLLOW) != 0) continue;
        type = S_ISDIR(cst.st_mode) ? DT_DIR : S_ISREG(cst.st_mode) ? DT_REG : DT_LNK;
      }
      if (type == DT_DIR) {
        if (report_all) report(w, rel, name, 1);
        if (strcmp(name, ".git") == 0) continue;
        if (n == cap) {
          char **s = realloc(stack, cap * 2 * sizeof *stack);
          if (!s) {
            fatal = ENOMEM;
            break;
          }
          stack = s;
          cap *= 2;
        }
        stack[n] = join(rel, name);
        if (!stack[n]) {
          fatal = ENOMEM;
          break;
        }
        n++;
      } else {
        if (report_all) report(w, rel, name, 0);
        if (type == DT_REG) fatal = watch_linked(w, dirfd(d), name, rel, name);
      }
    }
    closedir(d);
    free(rel);
  }
  while (n > 0) free(stack[--n]);
  free(stack);
  return fatal;
}

/* A new descriptor and the whole tree walked again; the reset is reported with the next take. */
static fatal_t rewalk(tree_watch_t *w) {
  if (w->ifd >= 0) close(w->ifd);
  drop_slots(w);
  w->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (w->ifd < 0) return errno;
  struct stat st;
  if (stat(w->root, &st) != 0) return errno;
  if (!S_ISDIR(st.st_mode)) return ENOTDIR;
  w->dev = st.st_dev;
  w->need_reset = 0;
  fatal_t fatal = walk(w, "", 0);
  pthread_mutex_lock(&w->mu);
  w->reset = 1;
  pthread_mutex_unlock(&w->mu);
  return fatal;
}

/* One event read from the descriptor. */
static fatal_t handle(tree_watch_t *w, const struct inotify_event *ev) {
  if (ev->mask & IN_Q_OVERFLOW) {
    w->need_reset = 1;
    return 0;
  }
  if (ev->wd <= 0 || (size_t)ev->wd >= w->slot_cap || !w->slots[ev->wd].path) return 0;
  slot_t *s = &w->slots[ev->wd];
  if (ev->mask & IN_IGNORED) {
    /* the watch is gone: its directory deleted (reported by its parent), or unmounted */
    int root = s->is_dir && !*s->path;
    free(s->path);
    s->path = NULL;
    w->watches--;
    if (root) w->need_reset = 1;
    return 0;
  }
  if (ev->mask & IN_UNMOUNT) {
    w->need_reset = 1;
    return 0;
  }
  if (!s->is_dir) {
    /* a file with several links: changed through some name */
    report(w, s->path, NULL, 0);
    return 0;
  }
  if (ev->len == 0 || ev->name[0] == 0) {
    /* the directory itself: moved (its paths below are no longer its slots' names) or deleted */
    if (ev->mask & IN_MOVE_SELF) w->need_reset = 1;
    if ((ev->mask & IN_DELETE_SELF) && !*s->path) w->need_reset = 1;
    if (ev->mask & IN_ATTRIB) report(w, s->path, NULL, 1);
    return 0;
  }
  const char *name = ev->name;
  if (is_shallow(w, s->path)) {
    /*
     * A directory git never looks into (excluded by a pattern of its own, or the state directory): nothing made
     * in it is watched or walked, and only its `.gitignore` is news (the caller takes the rules as changed).
     */
    if (strcmp(name, ".gitignore") == 0) report(w, s->path, name, 0);
    return 0;
  }
  if (ev->mask & IN_ISDIR) {
    report(w, s->path, name, 1);
    if (ev->mask & IN_MOVED_FROM) w->need_reset = 1; /* the slots below carry the old names */
    if ((ev->mask & (IN_CREATE | IN_MOVED_TO)) && strcmp(name, ".git") != 0) {
      char *rel = join(s->path, name);
      if (!rel) return ENOMEM;
      fatal_t fatal = walk(w, rel, 1);
      free(rel);
      return fatal;
    }
    return 0;
  }
  report(w, s->path, name, 0);
  if (ev->mask & (IN_CREATE | IN_MOVED_TO)) {
    /* one lstat by the file's path rather than an open, a stat and a close of its directory */
    char *rel = join(s->path, name);
    char abs[PATH_MAX];
    if (!rel) return ENOMEM;
    int fits = absolute(w, rel, abs, sizeof abs);
    free(rel);
    if (!fits) return ENAMETOOLONG;
    return watch_linked(w, AT_FDCWD, abs, s->path, name);
  }
  return 0;
}

/* Reads and handles every event queued now; a reset walk when one is needed. */
static fatal_t read_all(tree_watch_t *w) {
  char buf[65536] __attribute__((aligned(__alignof__(struct inotify_event))));
  for (;;) {
    ssize_t got = read(w->ifd, buf, sizeof buf);
    if (got < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) break;
      return errno;
    }
    if (got == 0) break;
    for (char *p = buf; p < buf + got;) {
      const struct inotify_event *ev = (const struct inotify_event *)p;
      fatal_t fatal = handle(w, ev);
      if (fatal) return fatal;
      p += sizeof *ev + ev->len;
    }
    if (w->need_reset) break;
  }
  if (w->need_reset) return rewalk(w);
  if (w->slot_cap > MAX_WD / 2) return rewalk(w);
  return 0;
}

static void fail_with(tree_watch_t *w, int err) {
  pthread_mutex_lock(&w->mu);
  w->failed = 1;
  w->failed_err = err;
  w->ready = 1;
  pthread_cond_broadcast(&w->cv);
  pthread_mutex_unlock(&w->mu);
}

static void *watch_main(void *arg) {
  tree_watch_t *w = arg;
  fatal_t fatal = rewalk(w);
  if (fatal) {
    fail_with(w, fatal);
    return NULL;
  }
  pthread_mutex_lock(&w->mu);
  w->reset = 0; /* the first walk is no reset: nothing was promised before it */
  w->ready = 1;
  w->watches_seen = w->watches;
  pthread_cond_broadcast(&w->cv);
  pthread_mutex_unlock(&w->mu);
  for (;;) {
    struct pollfd fds[2] = {{.fd = w->ifd, .events = POLLIN}, {.fd = w->wake, .events = POLLIN}};
    if (poll(fds, 2, -1) < 0 && errno != EINTR) {
      fail_with(w, errno);
      return NULL;
    }
    if (fds[1].revents & POLLIN) {
      uint64_t v;
      if (read(w->wake, &v, sizeof v) < 0) {
        /* nothing to do: the counter is read again on the next wake */
      }
    }
    pthread_mutex_lock(&w->mu);
    uint64_t asked = w->asked;
    int stop = atomic_load(&w->stop);
    pthread_mutex_unlock(&w->mu);
    if (stop) return NULL;
    fatal = read_all(w);
    if (fatal) {
      fail_with(w, fatal);
      return NULL;
    }
    pthread_mutex_lock(&w->mu);
    if (asked > w->answered) w->answered = asked;
    w->watches_seen = w->watches;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
  }
}

tree_watch_t *tree_watch_start(const char *root, const char *const *shallow, size_t shallow_count, size_t max_watches, int *err) {
  tree_watch_t *w = calloc(1, sizeof *w);
  if (!w) {
    *err = ENOMEM;
    return NULL;
  }
  w->ifd = -1;
  atomic_init(&w->stop, 0);
  w->root = strdup(root);
  w->root_len = strlen(root);
  w->shallow = calloc(shallow_count ? shallow_count : 1, sizeof *w->shallow);
  w->max_watches = max_watches;
  w->max_bytes = 1 << 20;
  w->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  int ok = w->root && w->shallow && w->wake >= 0;
  for (size_t i = 0; ok && i < shallow_count; i++) {
    w->shallow[i] = strdup(shallow[i]);
    if (!w->shallow[i]) ok = 0;
    else w->shallow_count++;
  }
  if (ok) qsort(w->shallow, w->shallow_count, sizeof *w->shallow, by_bytes);
  if (ok) {
    pthread_mutex_init(&w->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&w->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&w->thread, NULL, watch_main, w) != 0) {
      pthread_cond_destroy(&w->cv);
      pthread_mutex_destroy(&w->mu);
      ok = 0;
    }
  }
  if (!ok) {
    *err = errno ? errno : ENOMEM;
    if (w->wake >= 0) close(w->wake);
    for (size_t i = 0; i < w->shallow_count; i++) free(w->shallow[i]);
    free(w->shallow);
    free(w->root);
    free(w);
    return NULL;
  }
  return w;
}

int tree_watch_take(tree_watch_t *w, int wait_ms, size_t max_bytes, uint8_t **paths, size_t *len, int *err) {
  *paths = NULL;
  *len = 0;
  *err = 0;
  pthread_mutex_lock(&w->mu);
  w->max_bytes = max_bytes;
  uint64_t want = w->answered; /* a negative wait: what the thread has read so far */
  if (wait_ms >= 0) {
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += wait_ms / 1000;
    deadline.tv_nsec += (long)(wait_ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
      deadline.tv_sec++;
      deadline.tv_nsec -= 1000000000L;
    }
    want = ++w->asked;
    pthread_mutex_unlock(&w->mu);
    uint64_t one = 1;
    if (write(w->wake, &one, sizeof one) < 0) {
      /* the counter is full of wakes already: the thread wakes anyway */
    }
    pthread_mutex_lock(&w->mu);
    while (!w->failed && (!w->ready || w->answered < want)) {
      if (pthread_cond_timedwait(&w->cv, &w->mu, &deadline) == ETIMEDOUT) break;
    }
  }
  int flags = 0;
  if (w->failed) {
    flags = TW_FAILED;
    *err = w->failed_err;
  } else if (!w->ready || w->answered < want) {
    flags = TW_BUSY;
  } else {
    if (w->reset || w->overflowed) flags |= TW_RESET;
    w->reset = 0;
    w->overflowed = 0;
    *paths = w->out.bytes;
    *len = w->out.len;
    w->out.bytes = NULL;
    w->out.len = w->out.cap = 0;
  }
  pthread_mutex_unlock(&w->mu);
  return flags;
}

size_t tree_watch_count(tree_watch_t *w) {
  pthread_mutex_lock(&w->mu);
  size_t n = w->watches_seen;
  pthread_mutex_unlock(&w->mu);
  return n;
}

void tree_watch_close(tree_watch_t *w) {
  if (!w) return;
  pthread_mutex_lock(&w->mu);
  atomic_store(&w->stop, 1);
  pthread_mutex_unlock(&w->mu);
  uint64_t one = 1;
  if (write(w->wake, &one, sizeof one) < 0) {
    /* the thread wakes anyway */
  }
  pthread_join(w->thread, NULL);
  if (w->ifd >= 0) close(w->ifd);
  close(w->wake);
  drop_slots(w);
  for (size_t i = 0; i < w->shallow_count; i++) free(w->shallow[i]);
  free(w->shallow);
  free(w->root);
  free(w->out.bytes);
  pthread_cond_destroy(&w->cv);
  pthread_mutex_destroy(&w->mu);
  free(w);
}

#endif
