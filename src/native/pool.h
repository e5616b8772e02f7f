/*
 * A process-wide pool of worker threads running jobs: a job is a list of
 * items (files) that the workers take in index order, so results complete
 * roughly in order and the JavaScript side can consume a growing prefix of
 * them while the rest is still being read. The JavaScript thread never
 * blocks: it polls a job's progress.
 */
#ifndef WORKSNAP_POOL_H
#define WORKSNAP_POOL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* One worker's scratch space, reused from item to item. */
typedef struct {
  uint8_t *buf;
  size_t cap;
} worker_t;

/* A buffer above this size is given back after the item that needed it: idle threads hold little memory. */
#define BIG_BUFFER ((size_t)1 << 20)

/* Grows the worker's buffer to at least `need` bytes; 0 when out of memory. */
int worker_reserve(worker_t *w, size_t need);
/* Gives back a buffer grown past BIG_BUFFER. */
void worker_trim(worker_t *w);

typedef struct job job_t;

struct job {
  void (*run)(job_t *job, size_t index, worker_t *w);
  void (*destroy)(job_t *job);
  size_t count;
  /* the file-system paths, NUL-terminated, one after the other; offsets[i] is item i's */
  char *paths;
  size_t *offsets;
  /* directory the paths are relative to (AT_FDCWD for absolute paths) */
  int dirfd;
  atomic_int cancelled;
  /* ready[i] is set once item i is finished (or skipped after cancel) */
  atomic_uchar *ready;
  atomic_size_t finished;
  /* the prefix of ready items, advanced by job_ready_prefix (the JavaScript thread only) */
  size_t prefix;
  /*
   * The item the caller waits for (-1: none): the worker that sees it
   * finished clears this and calls notify(job), once.
   */
  atomic_llong watch;
  void (*notify)(job_t *job);
  /* called as the job is freed, when nothing can call notify any more */
  void (*notify_release)(job_t *job);
  void *notify_ctx;
  /* guarded by the pool's lock */
  size_t next;
  int refs;
  job_t *queue_next;
};

/*
 * Sets up the common fields (run and destroy must be set); paths are copied
 * and `dirfd` is owned by the job from here on. 0 when out of memory: then
 * free the job with job_discard.
 */
int job_init(job_t *job, const char *paths, size_t paths_len, size_t count, int dirfd);
/* Frees a job that was never submitted: its common fields, then destroy (which must cope with what is NULL). */
void job_discard(job_t *job);
/* Queues a job; the pool holds a reference until its last item is finished. */
void pool_submit(job_t *job);
/*
 * Queues a short job ahead of the others (a capture's lstat of a few thousand paths, asked while its files are
 * being hashed): the workers take its items as soon as they finish their current ones.
 */
void pool_submit_first(job_t *job);
/* Queues a job for the background threads: as many as the foreground's, at the lowest priority. */
void pool_submit_background(job_t *job);
/* Queues a job for the yielding threads: as many as the foreground's, a little below them (nice 5). */
void pool_submit_yielding(job_t *job);
/* Drops the caller's reference; the job is freed when no worker holds it either. */
void job_release(job_t *job);
/* The number of items finished, counting from the first, without a gap. */
size_t job_ready_prefix(job_t *job);
/*
 * Asks for job->notify once item `index` is finished; 1 (and no notify) when
 * it is finished already. Needs job->notify set.
 */
int job_watch(job_t *job, size_t index);
/* Threads in the pool (started on first use). */
int pool_threads(void);

#endif
