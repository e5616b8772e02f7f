#include "pool.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/syscall.h>
#endif

#define MAX_THREADS 8

/*
 * Three queues share one lock: the foreground one, served by thread_count()
 * threads; the background one (pool_submit_background), served by threads of
 * its own that run at the lowest priority, so background work never delays a
 * foreground job and only takes CPU time nothing else wants; and the yielding
 * one (pool_submit_yielding), whose threads run a little below the others
 * (nice 5), for work that should give way to what runs beside it (a cold
 * capture's read ahead, to the git status it waits for).
 */
typedef struct {
  pthread_cond_t wake;
  job_t *head, *tail;
  int started;
  /* the threads' nice value */
  int nice;
} queue_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static queue_t fore = {PTHREAD_COND_INITIALIZER, NULL, NULL, 0, 0};
static queue_t back = {PTHREAD_COND_INITIALIZER, NULL, NULL, 0, 19};
static queue_t yielding = {PTHREAD_COND_INITIALIZER, NULL, NULL, 0, 5};

int worker_reserve(worker_t *w, size_t need) {
  if (w->cap >= need) return 1;
  size_t cap = w->cap ? w->cap : 1 << 20;
  while (cap < need) cap *= 2;
  if (need > BIG_BUFFER) cap = need; /* a large file: exactly what it needs, given back after it (worker_trim) */
  uint8_t *grown = realloc(w->buf, cap);
  if (!grown) return 0;
  w->buf = grown;
  w->cap = cap;
  return 1;
}

int job_init(job_t *job, const char *paths, size_t paths_len, size_t count, int dirfd) {
  job->count = count;
  job->dirfd = dirfd;
  atomic_init(&job->cancelled, 0);
  atomic_init(&job->finished, 0);
  job->prefix = 0;
  atomic_init(&job->watch, -1);
  job->notify = NULL;
  job->notify_release = NULL;
  job->notify_ctx = NULL;
  job->next = 0;
  job->refs = 1;
  job->queue_next = NULL;
  job->paths = malloc(paths_len + 1);
  job->offsets = malloc((count + 1) * sizeof(size_t));
  job->ready = calloc(count + 1, 1);
  if (!job->paths || !job->offsets || !job->ready) return 0;
  memcpy(job->paths, paths, paths_len);
  job->paths[paths_len] = 0;
  size_t at = 0;
  for (size_t i = 0; i < count; i++) {
    job->offsets[i] = at < paths_len ? at : paths_len;
    while (at < paths_len && job->paths[at] != 0) at++;
    at++;
  }
  return 1;
}

/*
 * After items were marked finished: the watcher hears of it if its item is among them.
 *
 * The worker stores ready[i] then loads watch; job_watch stores watch then loads ready[i]. Each side needs a full
 * fence between its store and its load, or both may miss the other (x86 lets a load pass an earlier store still in
 * the store buffer: the worker reads no watch while the watcher reads the item unfinished, and nobody wakes it).
 */
static void check_watch(job_t *job) {
  atomic_thread_fence(memory_order_seq_cst);
  long long w = atomic_load(&job->watch);
  if (w < 0 || !atomic_load_explicit(&job->ready[w], memory_order_acquire)) return;
  if (atomic_compare_exchange_strong(&job->watch, &w, -1) && job->notify) job->notify(job);
}

int job_watch(job_t *job, size_t index) {
  if (index >= job->count || atomic_load_explicit(&job->ready[index], memory_order_acquire)) return 1;
  atomic_store(&job->watch, (long long)index);
  atomic_thread_fence(memory_order_seq_cst); /* see check_watch */
  // finished between the check and the store: take the watch back, unless a worker has already fired it
  long long w = (long long)index;
  if (atomic_load_explicit(&job->ready[index], memory_order_acquire) && atomic_compare_exchange_strong(&job->watch, &w, -1)) return 1;
  return 0;
}

void job_discard(job_t *job) {
  if (job->notify_release) job->notify_release(job);
  if (job->dirfd >= 0) close(job->dirfd);
  free(job->paths);
  free(job->offsets);
  free((void *)job->ready);
  job->destroy(job);
}

static void unref_locked(job_t *job) {
  if (--job->refs > 0) return;
  job_discard(job);
}

void job_release(job_t *job) {
  atomic_store(&job->cancelled, 1);
  pthread_mutex_lock(&lock);
  unref_locked(job);
  pthread_mutex_unlock(&lock);
}

void worker_trim(worker_t *w) {
  if (w->cap <= BIG_BUFFER) return;
  free(w->buf);
  w->buf = NULL;
  w->cap = 0;
}

/* The calling thread at a lower priority (Linux sets nice values per thread). */
static void lower_priority(int nice) {
#ifdef __linux__
  setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), nice);
#else
  (void)nice;
#endif
}

static void *worker_main(void *arg) {
  queue_t *q = arg;
  if (q->nice > 0) lower_priority(q->nice);
  worker_t w = {0};
  pthread_mutex_lock(&lock);
  for (;;) {
    while (!q->head) pthread_cond_wait(&q->wake, &lock);
    job_t *job = q->head;
    if (job->next >= job->count || atomic_load(&job->cancelled)) {
      // nothing left to start: the queue's reference goes; items not started count as finished
      q->head = job->queue_next;
      if (!q->head) q->tail = NULL;
      for (size_t i = job->next; i < job->count; i++) atomic_store(&job->ready[i], 1);
      job->next = job->count;
      check_watch(job);
      unref_locked(job);
      continue;
    }
    size_t index = job->next++;
    job->refs++;
    pthread_mutex_unlock(&lock);
    if (!atomic_load(&job->cancelled)) job->run(job, index, &w);
    worker_trim(&w);
    atomic_fetch_add(&job->finished, 1);
    atomic_store_explicit(&job->ready[index], 1, memory_order_release);
    check_watch(job);
    pthread_mutex_lock(&lock);
    unref_locked(job);
  }
  return NULL;
}

static int thread_count(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  if (n < 1) n = 1;
  return n > MAX_THREADS ? MAX_THREADS : (int)n;
}

static void start_locked(queue_t *q) {
  if (q->started) return;
  int n = thread_count();
  for (int i = 0; i < n; i++) {
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &attr, worker_main, q) == 0) q->started++;
    pthread_attr_destroy(&attr);
  }
}

static void submit(queue_t *q, job_t *job, int first) {
  pthread_mutex_lock(&lock);
  start_locked(q);
  job->refs++;
  if (first) {
    // the workers take their next item from it; the job that was first goes on once its items are all started
    job->queue_next = q->head;
    q->head = job;
    if (!q->tail) q->tail = job;
  } else {
    job->queue_next = NULL;
    if (q->tail) q->tail->queue_next = job;
    else q->head = job;
    q->tail = job;
  }
  pthread_cond_broadcast(&q->wake);
  pthread_mutex_unlock(&lock);
}

void pool_submit(job_t *job) { submit(&fore, job, 0); }

void pool_submit_first(job_t *job) { submit(&fore, job, 1); }

void pool_submit_background(job_t *job) { submit(&back, job, 0); }

void pool_submit_yielding(job_t *job) { submit(&yielding, job, 0); }

size_t job_ready_prefix(job_t *job) {
  size_t p = job->prefix;
  while (p < job->count && atomic_load_explicit(&job->ready[p], memory_order_acquire)) p++;
  job->prefix = p;
  return p;
}

int pool_threads(void) {
  pthread_mutex_lock(&lock);
  int n = fore.started ? fore.started : thread_count();
  pthread_mutex_unlock(&lock);
  return n;
}
