/*
 * Node-API surface of the native module (loaded by src/repo/native.ts).
 * Every call returns at once: jobs run on the pool's threads and the caller
 * polls `ready` for the finished prefix. Arguments are checked loosely (the
 * TypeScript wrapper is the only caller); a failure throws.
 */
#define _GNU_SOURCE /* syncfs */
#define NAPI_VERSION 8
#include <node_api.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <uchar.h>
#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "create_job.h"
#include "dirfd.h"
#include "files.h"
#include "bundle_put.h"
#include "git_blob.h"
#include "hash_job.h"
#include "json_strings.h"
#include "listing_plan.h"
#include "manifest_columns.h"
#include "patch_hunks.h"
#include "patch_many.h"
#include "placed_diff.h"
#include "read_many.h"
#include "pool.h"
#include "scan_job.h"
#include "search.h"
#include "sha1.h"
#include "sha256.h"
#include "sha256_many.h"
#include "sink_napi.h"
#include "stat_job.h"
#include "tree_watch.h"
#include "trigram_job.h"

#define CHECK(call)                                   \
  do {                                                \
    if ((call) != napi_ok) return throw_(env, #call); \
  } while (0)

static napi_value throw_(napi_env env, const char *what) {
  const napi_extended_error_info *info = NULL;
  napi_get_last_error_info(env, &info);
  char msg[256];
  snprintf(msg, sizeof msg, "worksnap native: %s failed%s%s", what, info && info->error_message ? ": " : "",
           info && info->error_message ? info->error_message : "");
  bool pending = false;
  napi_is_exception_pending(env, &pending);
  if (!pending) napi_throw_error(env, NULL, msg);
  return NULL;
}

static napi_value fail(napi_env env, const char *msg) {
  napi_throw_error(env, NULL, msg);
  return NULL;
}

/*
 * The root of a job could not be opened: the message carries the system's
 * reason, so "Too many open files" is recognised as a passing shortage
 * (BUSY), not an internal failure.
 */
static napi_value fail_open_root(napi_env env) {
  char msg[160];
  snprintf(msg, sizeof msg, "worksnap native: cannot open the root directory: %s", strerror(errno));
  return fail(env, msg);
}

typedef struct {
  job_t *job;
  int released;
} handle_t;

static void handle_finalize(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  handle_t *h = data;
  if (!h->released) job_release(h->job);
  free(h);
}

static napi_value wrap(napi_env env, job_t *job) {
  handle_t *h = malloc(sizeof *h);
  if (!h) {
    job_release(job);
    return fail(env, "worksnap native: out of memory");
  }
  h->job = job;
  h->released = 0;
  napi_value ext;
  if (napi_create_external(env, h, handle_finalize, NULL, &ext) != napi_ok) {
    job_release(job);
    free(h);
    return throw_(env, "napi_create_external");
  }
  return ext;
}

static handle_t *unwrap(napi_env env, napi_value v) {
  void *data = NULL;
  if (napi_get_value_external(env, v, &data) != napi_ok || !data) return NULL;
  return data;
}

static int bytes_of(napi_env env, napi_value v, void **data, size_t *len) {
  napi_typedarray_type type;
  size_t length, offset;
  napi_value ab;
  if (napi_get_typedarray_info(env, v, &type, &length, data, &ab, &offset) != napi_ok) return 0;
  size_t unit = type == napi_float64_array ? 8 : 1;
  *len = length * unit;
  return 1;
}

static napi_value args_of(napi_env env, napi_callback_info info, size_t want, napi_value *argv) {
  size_t argc = want;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < want) return fail(env, "worksnap native: missing arguments");
  return argv[0];
}

static double num(napi_env env, napi_value v) {
  double d = NAN;
  napi_get_value_double(env, v, &d);
  return d;
}

static napi_value number(napi_env env, double d) {
  napi_value v;
  napi_create_double(env, d, &v);
  return v;
}

/* A job's root, opened as a directory; -1 with an exception pending when it cannot be. */
static int open_root(napi_env env, napi_value v) {
  char root[4096];
  size_t root_len;
  if (napi_get_value_string_utf8(env, v, root, sizeof root, &root_len) != napi_ok) {
    throw_(env, "napi_get_value_string_utf8");
    return -1;
  }
  if (root_len >= sizeof root - 1) {
    fail(env, "worksnap native: root path too long");
    return -1;
  }
  int dirfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0) fail_open_root(env);
  return dirfd;
}

/* hashStart(root, paths, count, trustBeforeMs, streamThreshold, idBytes): idBytes 20 (SHA-1) or 32 (SHA-256) */
static napi_value hash_start(napi_env env, napi_callback_info info) {
  napi_value argv[6];
  if (!args_of(env, info, 6, argv)) return NULL;
  void *paths;
  size_t paths_len;
  if (!bytes_of(env, argv[1], &paths, &paths_len)) return fail(env, "worksnap native: paths must be a Uint8Array");
  double count = num(env, argv[2]), trust = num(env, argv[3]), threshold = num(env, argv[4]), id_bytes = num(env, argv[5]);
  if (!(count >= 0) || !(threshold >= 1)) return fail(env, "worksnap native: bad count or threshold");
  if (id_bytes != GIT_SHA1_BYTES && id_bytes != GIT_SHA256_BYTES) return fail(env, "worksnap native: idBytes must be 20 or 32");
  int dirfd = open_root(env, argv[0]);
  if (dirfd < 0) return NULL;
  hash_job_t *job = hash_job_new(paths, paths_len, (size_t)count, dirfd, isnan(trust) ? 0 : trust, (size_t)threshold, (size_t)id_bytes);
  if (!job) return fail(env, "worksnap native: out of memory");
  pool_submit(&job->base);
  return wrap(env, &job->base);
}

/*
 * hashStartListing(root, listing, trustBeforeMs, streamThreshold): a hash job over the leaders of a
 * `git ls-files -s -v -z` listing (listing_plan.c), started before the listing is parsed in TypeScript.
 * Returns [job | null (no plain record), plan]: plan is an Int32Array of the plain records' count p, the
 * leaders' count l, each plain record's leader (p entries), then each leader's plain record (l entries).
 */
/* A new typed array of n values of `unit` bytes and where they are written; NULL with an exception pending when it cannot be made. */
static napi_value typed_array(napi_env env, napi_typedarray_type type, size_t unit, size_t n, void **values) {
  napi_value ab, arr;
  if (napi_create_arraybuffer(env, n * unit, values, &ab) != napi_ok || napi_create_typedarray(env, type, n, ab, 0, &arr) != napi_ok) {
    throw_(env, "napi_create_typedarray");
    return NULL;
  }
  return arr;
}

/* A new Int32Array of n values and where they are written (typed_array). */
static napi_value int32_array(napi_env env, size_t n, int32_t **values) { return typed_array(env, napi_int32_array, sizeof(int32_t), n, (void **)values); }

/* JavaScript's null. */
static napi_value null_value(napi_env env) {
  napi_value r = NULL;
  napi_get_null(env, &r);
  return r;
}

/* [a, b]; NULL with an exception pending when it cannot be made. */
static napi_value pair_of(napi_env env, napi_value a, napi_value b) {
  napi_value r;
  if (napi_create_array_with_length(env, 2, &r) != napi_ok || napi_set_element(env, r, 0, a) != napi_ok || napi_set_element(env, r, 1, b) != napi_ok) {
    throw_(env, "napi_create_array");
    return NULL;
  }
  return r;
}

static napi_value hash_start_listing(napi_env env, napi_callback_info info) {
  napi_value argv[4];
  if (!args_of(env, info, 4, argv)) return NULL;
  void *listing;
  size_t listing_len;
  if (!bytes_of(env, argv[1], &listing, &listing_len)) return fail(env, "worksnap native: listing must be a Uint8Array");
  double trust = num(env, argv[2]), threshold = num(env, argv[3]);
  if (!(threshold >= 1)) return fail(env, "worksnap native: bad threshold");
  listing_plan_t plan;
  if (!listing_plan(listing, listing_len, &plan)) return fail(env, "worksnap native: out of memory");
  napi_value out, job_value;
  int32_t *v;
  napi_value arr = int32_array(env, 2 + plan.plain + plan.leaders, &v);
  if (!arr) {
    listing_plan_free(&plan);
    return NULL;
  }
  v[0] = (int32_t)plan.plain;
  v[1] = (int32_t)plan.leaders;
  memcpy(v + 2, plan.leader_of, plan.plain * sizeof(int32_t));
  memcpy(v + 2 + plan.plain, plan.leader_plain, plan.leaders * sizeof(int32_t));
  if (plan.leaders == 0) {
    listing_plan_free(&plan);
    napi_get_null(env, &job_value);
  } else {
    int dirfd = open_root(env, argv[0]);
    if (dirfd < 0) {
      listing_plan_free(&plan);
      return NULL;
    }
    hash_job_t *job = hash_job_new(plan.paths, plan.paths_len, plan.leaders, dirfd, isnan(trust) ? 0 : trust, (size_t)threshold, plan.id_hex / 2);
    listing_plan_free(&plan);
    if (!job) return fail(env, "worksnap native: out of memory");
    /* it runs beside the git status the capture waits for, and gives way to it */
    pool_submit_yielding(&job->base);
    job_value = wrap(env, &job->base);
    if (!job_value) return NULL;
  }
  CHECK(napi_create_array_with_length(env, 2, &out));
  CHECK(napi_set_element(env, out, 0, job_value));
  CHECK(napi_set_element(env, out, 1, arr));
  return out;
}

/*
 * listingRecords(listing): the records of a `git ls-files -s -v -z` listing as listing_plan.c splits it, for
 * the TypeScript parse (tree-scan.ts): an Int32Array of LR_FIELDS values per record (listing_plan.h), or
 * null for a listing of 2 GiB or more.
 */
static napi_value listing_records_of(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!args_of(env, info, 1, argv)) return NULL;
  void *listing;
  size_t listing_len;
  if (!bytes_of(env, argv[0], &listing, &listing_len)) return fail(env, "worksnap native: listing must be a Uint8Array");
  int32_t *records;
  size_t count;
  int ok = listing_records(listing, listing_len, &records, &count);
  napi_value out;
  if (ok < 0) {
    CHECK(napi_get_null(env, &out));
    return out;
  }
  if (ok == 0) return fail(env, "worksnap native: out of memory");
  int32_t *v;
  size_t n = count * LR_FIELDS;
  out = int32_array(env, n, &v);
  if (out && n > 0) memcpy(v, records, n * sizeof(int32_t));
  free(records);
  return out;
}

static int needles(napi_env env, napi_value array, needle_t **out, size_t *count, uint8_t **pool, size_t *pool_used, size_t pool_cap) {
  uint32_t n = 0;
  if (napi_get_array_length(env, array, &n) != napi_ok) return 0;
  *out = calloc(n ? n : 1, sizeof(needle_t));
  if (!*out) return 0;
  *count = n;
  for (uint32_t i = 0; i < n; i++) {
    napi_value el;
    void *data;
    size_t len;
    if (napi_get_element(env, array, i, &el) != napi_ok || !bytes_of(env, el, &data, &len)) return 0;
    if (*pool_used + len > pool_cap) return 0;
    memcpy(*pool + *pool_used, data, len);
    (*out)[i].bytes = *pool + *pool_used;
    (*out)[i].len = len;
    *pool_used += len;
  }
  return 1;
}

/*
 * scanStart(paths, count, flags, known, limit, sniff, racyMs, literals | null, required, needleBytes, keep, root, folded)
 * folded: how many of the first literals are compared ASCII case-insensitively (given in lowercase); 0 when omitted.
 * flags: a Uint8Array (bit 0: hash), or a number for every file; known: a Float64Array of 5 stamps a file (NaN:
 * none), or null.
 */
static int typed_of(napi_env env, napi_value v, napi_typedarray_type want, void **data, size_t *count);
static job_t *job_of(napi_env env, napi_callback_info info, void (*run)(job_t *, size_t, worker_t *), const char *not_kind);

static napi_value scan_start(napi_env env, napi_callback_info info) {
  napi_value argv[13];
  size_t argc = 13;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 12) return fail(env, "worksnap native: missing arguments");
  double folded = argc > 12 ? num(env, argv[12]) : 0;
  if (!(folded >= 0)) folded = 0;
  void *paths, *flags = NULL, *known = NULL;
  size_t paths_len, flags_len = 0, known_len = 0;
  napi_valuetype flags_type, known_type;
  napi_typeof(env, argv[2], &flags_type);
  napi_typeof(env, argv[3], &known_type);
  if (!bytes_of(env, argv[0], &paths, &paths_len) || (flags_type != napi_number && !bytes_of(env, argv[2], &flags, &flags_len)) ||
      (known_type != napi_null && !bytes_of(env, argv[3], &known, &known_len)))
    return fail(env, "worksnap native: paths must be a typed array, flags a typed array or a number, known a Float64Array or null");
  double count = num(env, argv[1]);
  if (!(count >= 0) || (flags && flags_len < (size_t)count) || (known && known_len < (size_t)count * 5 * sizeof(double)))
    return fail(env, "worksnap native: bad counts");
  char root[4096];
  size_t root_len = 0;
  CHECK(napi_get_value_string_utf8(env, argv[11], root, sizeof root, &root_len));
  if (root_len >= sizeof root - 1) return fail(env, "worksnap native: root path too long");
  int dirfd = AT_FDCWD;
  if (root_len > 0 && (dirfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) return fail_open_root(env);
  scan_job_t *job = scan_job_new(paths, paths_len, (size_t)count, dirfd);
  if (!job) return fail(env, "worksnap native: out of memory");
  if (flags) memcpy(job->flags, flags, (size_t)count);
  else memset(job->flags, (int)num(env, argv[2]), (size_t)count);
  if (known) {
    job->known = malloc((size_t)count * 5 * sizeof(double) + 1);
    if (!job->known) {
      job_discard(&job->base);
      return fail(env, "worksnap native: out of memory");
    }
    memcpy(job->known, known, (size_t)count * 5 * sizeof(double));
  }
  job->limit = (size_t)num(env, argv[4]);
  job->sniff = (size_t)num(env, argv[5]);
  job->racy_ms = num(env, argv[6]);
  /*
   * keep: false (nothing), true (whole files), 2 (the lines that may match, numbered), or a Float64Array of the
   * size expected of each file (each read into its slot of one block: scanBlock)
   */
  napi_valuetype keep_type;
  napi_typeof(env, argv[10], &keep_type);
  bool keep_slots = false;
  if (keep_type == napi_object && napi_is_typedarray(env, argv[10], &keep_slots) == napi_ok && keep_slots) {
    void *expect;
    size_t expect_len;
    if (!typed_of(env, argv[10], napi_float64_array, &expect, &expect_len) || expect_len != (size_t)count) {
      job_discard(&job->base);
      return fail(env, "worksnap native: the sizes expected must be a Float64Array, one per path");
    }
    if (!scan_job_slots(job, expect)) {
      job_discard(&job->base);
      return fail(env, "worksnap native: out of memory");
    }
  } else if (keep_type == napi_number) job->keep = num(env, argv[10]) == 2 ? SCAN_KEEP_LINES : SCAN_KEEP_NONE;
  else {
    bool keep = true;
    napi_get_value_bool(env, argv[10], &keep);
    job->keep = keep ? SCAN_KEEP_FILE : SCAN_KEEP_NONE;
  }
  size_t cap = (size_t)num(env, argv[9]), used = 0;
  job->needle_bytes = malloc(cap ? cap : 1);
  napi_valuetype t;
  napi_typeof(env, argv[7], &t);
  int ok = job->needle_bytes != NULL;
  job->has_literals = t != napi_null && t != napi_undefined;
  if (ok && job->has_literals) ok = needles(env, argv[7], &job->literals, &job->literal_count, &job->needle_bytes, &used, cap);
  for (size_t i = 0; ok && job->has_literals && i < job->literal_count && i < (size_t)folded; i++) job->literals[i].fold = 1;
  uint32_t sets = 0;
  if (ok) ok = napi_get_array_length(env, argv[8], &sets) == napi_ok;
  if (ok) {
    job->required = calloc(sets ? sets : 1, sizeof(needle_t *));
    job->required_sizes = calloc(sets ? sets : 1, sizeof(size_t));
    job->required_count = sets;
    ok = job->required && job->required_sizes;
  }
  for (uint32_t r = 0; ok && r < sets; r++) {
    napi_value set;
    ok = napi_get_element(env, argv[8], r, &set) == napi_ok &&
         needles(env, set, &job->required[r], &job->required_sizes[r], &job->needle_bytes, &used, cap);
  }
  if (!ok) {
    job_discard(&job->base);
    return fail(env, "worksnap native: bad literals");
  }
  pool_submit(&job->base);
  return wrap(env, &job->base);
}

static job_t *job_arg(napi_env env, napi_callback_info info, size_t want, napi_value *argv) {
  if (!args_of(env, info, want, argv)) return NULL;
  handle_t *h = unwrap(env, argv[0]);
  if (!h || h->released) {
    fail(env, "worksnap native: not a live job");
    return NULL;
  }
  return h->job;
}

/* ready(job): how many items, from the first, are finished */
static napi_value ready(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  job_t *job = job_arg(env, info, 1, argv);
  if (!job) return NULL;
  return number(env, (double)job_ready_prefix(job));
}

/* hashRecords(job, from, to): a copy of the records of finished items */
static napi_value hash_records(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  job_t *job = job_arg(env, info, 3, argv);
  if (!job) return NULL;
  size_t from = (size_t)num(env, argv[1]), to = (size_t)num(env, argv[2]);
  if (from > to || to > job_ready_prefix(job)) return fail(env, "worksnap native: records not ready");
  hash_job_t *hj = (hash_job_t *)job;
  napi_value buf;
  void *out;
  CHECK(napi_create_buffer_copy(env, (to - from) * HASH_RECORD, hj->records + from * HASH_RECORD, &out, &buf));
  return buf;
}

static void free_kept(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  free(data);
}

/*
 * scanCollect(job, from, to): [records, files]; a record whose file was kept
 * has in SR_OFFSET the index of its bytes in `files`, a Buffer over the very
 * memory the worker read into (no copy), freed when the Buffer is collected.
 */
static napi_value scan_collect(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  job_t *job = job_arg(env, info, 3, argv);
  if (!job) return NULL;
  size_t from = (size_t)num(env, argv[1]), to = (size_t)num(env, argv[2]);
  if (from > to || to > job_ready_prefix(job)) return fail(env, "worksnap native: records not ready");
  scan_job_t *sj = (scan_job_t *)job;
  napi_value files, records, pair;
  CHECK(napi_create_array(env, &files));
  uint32_t at = 0;
  for (size_t i = from; i < to; i++) {
    uint8_t *rec = sj->records + i * SCAN_RECORD;
    if (!sj->kept[i]) continue;
    double len;
    memcpy(&len, rec + SR_LENGTH, sizeof len);
    napi_value buf;
    if (len > 0) {
      if (napi_create_external_buffer(env, (size_t)len, sj->kept[i], free_kept, NULL, &buf) != napi_ok) return throw_(env, "napi_create_external_buffer");
    } else {
      void *unused;
      free(sj->kept[i]);
      CHECK(napi_create_buffer(env, 0, &unused, &buf));
    }
    sj->kept[i] = NULL; // the Buffer owns it now
    CHECK(napi_set_element(env, files, at, buf));
    put_f64(rec, SR_OFFSET, (double)at);
    at++;
  }
  void *out;
  CHECK(napi_create_buffer_copy(env, (to - from) * SCAN_RECORD, sj->records + from * SCAN_RECORD, &out, &records));
  CHECK(napi_create_array_with_length(env, 2, &pair));
  CHECK(napi_set_element(env, pair, 0, records));
  CHECK(napi_set_element(env, pair, 1, files));
  return pair;
}

static void release_slot_block(napi_env env, void *data, void *hint) {
  (void)env;
  (void)data;
  slot_block_release(hint);
}

/*
 * scanBlock(job): a Buffer over the block a scan started with expected sizes reads its files into (no copy): a
 * record of kind BYTES has its bytes at SR_OFFSET, SR_LENGTH long. The Buffer and the job each hold the block;
 * the last to let go frees it (detaching the Buffer lets go of it at once). An empty Buffer for a job without one.
 */
static napi_value scan_block(napi_env env, napi_callback_info info) {
  job_t *job = job_of(env, info, scan_job_run, "worksnap native: not a scan job");
  if (!job) return NULL;
  scan_job_t *sj = (scan_job_t *)job;
  napi_value buf;
  if (!sj->block || sj->block->len == 0) {
    void *unused;
    CHECK(napi_create_buffer(env, 0, &unused, &buf));
    return buf;
  }
  atomic_fetch_add(&sj->block->refs, 1);
  if (napi_create_external_buffer(env, sj->block->len, sj->block->data, release_slot_block, sj->block, &buf) != napi_ok) {
    slot_block_release(sj->block);
    return throw_(env, "napi_create_external_buffer");
  }
  return buf;
}

/*
 * sinkPutScanned(sink, job, from, to, digests, modes, prefix): [count, bytes, queued]. Queues into the bundle's
 * sink the run of the export's scan items from `from` (all of [from, to) finished) that were read whole with the
 * blob's size and SHA-256 (`digests`: 32 bytes per item from `from`; `modes`: a byte per item, BUNDLE_FILE,
 * BUNDLE_EXEC or BUNDLE_OTHER), each as its tar header named `prefix` + its path, its bytes borrowed from the
 * window's block, its padding (bundle_put.h); stops at the first that is not. The entries put, their bytes, the
 * sink's queue after.
 */
static napi_value sink_put_scanned(napi_env env, napi_callback_info info) {
  napi_value argv[7];
  if (!args_of(env, info, 7, argv)) return NULL;
  sink_t *sink = sink_napi_value(env, argv[0]);
  handle_t *h = unwrap(env, argv[1]);
  if (!sink || !h || h->released || h->job->run != scan_job_run) return fail(env, "worksnap native: sinkPutScanned takes a live sink and a live scan job");
  scan_job_t *job = (scan_job_t *)h->job;
  double from = num(env, argv[2]), to = num(env, argv[3]);
  void *digests, *modes, *prefix;
  size_t digests_len, modes_len, prefix_len;
  if (!(from >= 0 && to >= from && to <= (double)job_ready_prefix(&job->base)) || !bytes_of(env, argv[4], &digests, &digests_len) ||
      !bytes_of(env, argv[5], &modes, &modes_len) || !bytes_of(env, argv[6], &prefix, &prefix_len) || digests_len < 32 * (size_t)(to - from) ||
      modes_len < (size_t)(to - from))
    return fail(env, "worksnap native: sinkPutScanned: items not finished, or digests and modes short of them");
  bundle_put_t r = bundle_put_scanned(sink, job, (size_t)from, (size_t)to, digests, modes, prefix, prefix_len);
  if (!r.ok) return fail(env, "worksnap native: out of memory");
  napi_value out;
  CHECK(napi_create_array_with_length(env, 3, &out));
  CHECK(napi_set_element(env, out, 0, number(env, (double)r.count)));
  CHECK(napi_set_element(env, out, 1, number(env, (double)r.bytes)));
  CHECK(napi_set_element(env, out, 2, number(env, (double)r.queued)));
  return out;
}

/*
 * batchBlock(length): a Buffer over a new block of `length` bytes (slot_block.h) for FileBatches to fill: a create
 * job given bytes in it borrows them instead of copying (create_job.h). The Buffer holds the block; each job
 * holds it too until it is done.
 */
static napi_value batch_block(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!args_of(env, info, 1, argv)) return NULL;
  double len = num(env, argv[0]);
  if (!(len >= 1 && len <= (double)(1u << 30)) || len != floor(len)) return fail(env, "worksnap native: bad block length");
  slot_block_t *block = slot_block_new((size_t)len);
  if (!block) return fail(env, "worksnap native: out of memory");
  napi_value buf;
  if (napi_create_external_buffer(env, block->len, block->data, release_slot_block, block, &buf) != napi_ok) {
    slot_block_release(block);
    return throw_(env, "napi_create_external_buffer");
  }
  return buf;
}

/* slotSpares(): [blocks, bytes] kept as spares for an export's next windows (none once every export has ended) */
static napi_value slot_spares(napi_env env, napi_callback_info info) {
  (void)info;
  size_t count = 0, bytes = 0;
  slot_block_spares(&count, &bytes);
  napi_value out, c, b;
  CHECK(napi_create_array_with_length(env, 2, &out));
  CHECK(napi_create_double(env, (double)count, &c));
  CHECK(napi_create_double(env, (double)bytes, &b));
  CHECK(napi_set_element(env, out, 0, c));
  CHECK(napi_set_element(env, out, 1, b));
  return out;
}

/* A job's way back to JavaScript: a thread-safe function, freed when it is finalized. */
typedef struct {
  napi_threadsafe_function tsfn;
} notifier_t;

static void tsfn_notify(job_t *job) { napi_call_threadsafe_function(((notifier_t *)job->notify_ctx)->tsfn, NULL, napi_tsfn_nonblocking); }

static void tsfn_release(job_t *job) { napi_release_threadsafe_function(((notifier_t *)job->notify_ctx)->tsfn, napi_tsfn_release); }

static void notifier_free(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  free(data);
}

/* On the JavaScript thread: the event loop need not stay up for this job any more; the callback runs. */
static void tsfn_call(napi_env env, napi_value fn, void *context, void *data) {
  (void)data;
  if (!env || !fn) return;
  napi_unref_threadsafe_function(env, ((notifier_t *)context)->tsfn);
  napi_value undefined, result;
  napi_get_undefined(env, &undefined);
  napi_call_function(env, undefined, fn, 0, NULL, &result);
}

/* notify(job, fn): fn() runs on this thread whenever a watched item finishes (see watch); once per job */
static napi_value notify(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  job_t *job = job_arg(env, info, 2, argv);
  if (!job) return NULL;
  if (job->notify) return fail(env, "worksnap native: the job notifies already");
  napi_value name;
  CHECK(napi_create_string_utf8(env, "worksnap-job", NAPI_AUTO_LENGTH, &name));
  notifier_t *n = malloc(sizeof *n);
  if (!n) return fail(env, "worksnap native: out of memory");
  if (napi_create_threadsafe_function(env, argv[1], NULL, name, 0, 1, n, notifier_free, n, tsfn_call, &n->tsfn) != napi_ok) {
    free(n);
    return throw_(env, "napi_create_threadsafe_function");
  }
  CHECK(napi_unref_threadsafe_function(env, n->tsfn));
  job->notify_ctx = n;
  job->notify_release = tsfn_release;
  job->notify = tsfn_notify;
  return NULL;
}

/* watch(job, index): true when item index is finished already; else notify's fn runs once it is */
static napi_value watch(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  job_t *job = job_arg(env, info, 2, argv);
  if (!job) return NULL;
  if (!job->notify) return fail(env, "worksnap native: call notify before watch");
  double index = num(env, argv[1]);
  if (!(index >= 0)) return fail(env, "worksnap native: bad index");
  napi_threadsafe_function tsfn = ((notifier_t *)job->notify_ctx)->tsfn;
  napi_ref_threadsafe_function(env, tsfn);
  int done = job_watch(job, (size_t)index);
  if (done) napi_unref_threadsafe_function(env, tsfn);
  napi_value r;
  napi_get_boolean(env, done, &r);
  return r;
}

/*
 * scanKinds(job, from, to, kinds): the kinds of finished items into kinds[from..to), and a copy of the
 * records of the items that may match (BYTES), in order; nothing else is copied (a read ahead's common case).
 */
static napi_value scan_kinds(napi_env env, napi_callback_info info) {
  napi_value argv[4];
  job_t *job = job_arg(env, info, 4, argv);
  if (!job) return NULL;
  size_t from = (size_t)num(env, argv[1]), to = (size_t)num(env, argv[2]);
  if (from > to || to > job_ready_prefix(job)) return fail(env, "worksnap native: records not ready");
  void *kinds;
  size_t kinds_len;
  if (!bytes_of(env, argv[3], &kinds, &kinds_len) || kinds_len < to) return fail(env, "worksnap native: kinds too short");
  scan_job_t *sj = (scan_job_t *)job;
  size_t passing = 0;
  for (size_t i = from; i < to; i++) {
    uint8_t kind = sj->records[i * SCAN_RECORD + SR_KIND];
    ((uint8_t *)kinds)[i] = kind;
    if (kind == SCAN_BYTES) passing++;
  }
  napi_value out;
  void *dst;
  CHECK(napi_create_buffer(env, passing * SCAN_RECORD, &dst, &out));
  size_t at = 0;
  for (size_t i = from; i < to; i++) {
    const uint8_t *rec = sj->records + i * SCAN_RECORD;
    if (rec[SR_KIND] != SCAN_BYTES) continue;
    memcpy((uint8_t *)dst + at * SCAN_RECORD, rec, SCAN_RECORD);
    at++;
  }
  return out;
}

/* release(job): stops items not started yet and drops the caller's hold; idempotent */
static napi_value release(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!args_of(env, info, 1, argv)) return NULL;
  handle_t *h = unwrap(env, argv[0]);
  if (h && !h->released) {
    h->released = 1;
    job_release(h->job);
  }
  return NULL;
}

/* The one argument of a call taking bytes; 0 (with an exception pending) when it is not a typed array. */
static int bytes_arg(napi_env env, napi_callback_info info, void **data, size_t *len) {
  napi_value argv[1];
  if (!args_of(env, info, 1, argv)) return 0;
  if (bytes_of(env, argv[0], data, len)) return 1;
  fail(env, "worksnap native: expected a Uint8Array");
  return 0;
}

/* sha256(bytes) and gitBlobId(bytes): one-shot digests, for tests of the implementations */
static napi_value sha256_once(napi_env env, napi_callback_info info) {
  void *data;
  size_t len;
  if (!bytes_arg(env, info, &data, &len)) return NULL;
  sha256_ctx c;
  sha256_init(&c);
  sha256_update(&c, data, len);
  void *out;
  napi_value buf;
  CHECK(napi_create_buffer(env, 32, &out, &buf));
  sha256_final(&c, out);
  return buf;
}

/*
 * sha256Many(list, threads): the SHA-256 of each Uint8Array of `list`, 32
 * bytes each in one Buffer, on up to `threads` threads (sha256_many.h). The
 * output is made before the arrays' memory is taken, so nothing is allocated
 * on the JavaScript heap while the threads read it.
 */
static napi_value sha256_many_of(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  if (!args_of(env, info, 2, argv)) return NULL;
  uint32_t n = 0;
  bool is_array = false;
  if (napi_is_array(env, argv[0], &is_array) != napi_ok || !is_array || napi_get_array_length(env, argv[0], &n) != napi_ok) {
    return fail(env, "worksnap native: expected an array of Uint8Arrays");
  }
  void *out;
  napi_value r;
  CHECK(napi_create_buffer(env, 32 * (size_t)n, &out, &r));
  const uint8_t **data = malloc((n + 1) * sizeof *data);
  size_t *len = malloc((n + 1) * sizeof *len);
  if (!data || !len) {
    free(data);
    free(len);
    return fail(env, "worksnap native: out of memory");
  }
  for (uint32_t k = 0; k < n; k++) {
    napi_value item;
    void *d;
    if (napi_get_element(env, argv[0], k, &item) != napi_ok || !bytes_of(env, item, &d, &len[k])) {
      free(data);
      free(len);
      return fail(env, "worksnap native: expected an array of Uint8Arrays");
    }
    data[k] = d;
  }
  double threads = num(env, argv[1]);
  sha256_many(data, len, n, out, threads >= 1 && threads <= 64 ? (int)threads : 1);
  free(data);
  free(len);
  return r;
}

static napi_value git_blob_id(napi_env env, napi_callback_info info) {
  void *data;
  size_t len;
  if (!bytes_arg(env, info, &data, &len)) return NULL;
  sha1_ctx c;
  git_blob_init(&c, len);
  sha1_update(&c, data, len);
  void *out;
  napi_value buf;
  CHECK(napi_create_buffer(env, 20, &out, &buf));
  sha1_final(&c, out);
  return buf;
}

/* accelerate(on): SHA extensions on (where the CPU has them) or off, for tests of both implementations; only while no job runs */
static napi_value accelerate(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!args_of(env, info, 1, argv)) return NULL;
  bool on = true;
  napi_get_value_bool(env, argv[0], &on);
  sha256_select(on);
  sha1_select(on);
  napi_value r;
  napi_get_boolean(env, sha256_accelerated() && sha1_accelerated(), &r);
  return r;
}

/*
 * trimMemory(): gives the C heap's free memory back to the system; whether it
 * could (glibc's malloc_trim; elsewhere nothing to do). The jobs' threads
 * allocate from per-thread arenas, which keep what a large job freed (tens
 * of MB after a trigram index build) until asked.
 */
static napi_value trim_memory(napi_env env, napi_callback_info info) {
  (void)info;
  bool trimmed = false;
#if defined(__GLIBC__)
  trimmed = malloc_trim(0) != 0;
#endif
  napi_value r;
  napi_get_boolean(env, trimmed, &r);
  return r;
}

/*
 * keepFreedMemory(): from now on, the C heap keeps what is freed for the next allocation rather than giving it
 * back to the system (glibc: blocks up to 64 MiB from the arenas instead of their own mappings, and no trimming);
 * whether it could. For a process that ends soon after its work (the CLI's export): its reads of up to 64 MiB,
 * each freed once written, then reuse memory already touched instead of faulting in new pages every time.
 */
static napi_value keep_freed_memory(napi_env env, napi_callback_info info) {
  (void)info;
  bool kept = false;
#if defined(__GLIBC__)
  kept = mallopt(M_MMAP_THRESHOLD, 64 << 20) == 1 && mallopt(M_TRIM_THRESHOLD, 1 << 30) == 1;
#endif
  napi_value r;
  napi_get_boolean(env, kept, &r);
  return r;
}

/* countByte(bytes, byte, from, to): occurrences of byte in bytes[from, to) */
static napi_value count_byte_of(napi_env env, napi_callback_info info) {
  napi_value argv[4];
  if (!args_of(env, info, 4, argv)) return NULL;
  void *data;
  size_t len;
  if (!bytes_of(env, argv[0], &data, &len)) return fail(env, "worksnap native: expected a Uint8Array");
  double byte = num(env, argv[1]), from = num(env, argv[2]), to = num(env, argv[3]);
  if (!(from >= 0) || !(to <= (double)len) || !(from <= to)) return number(env, 0);
  return number(env, (double)count_byte((const uint8_t *)data + (size_t)from, (size_t)(to - from), (uint8_t)byte));
}

/* longestRun(bytes, byte): the longest stretch without byte */
static napi_value longest_run_of(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  if (!args_of(env, info, 2, argv)) return NULL;
  void *data;
  size_t len;
  if (!bytes_of(env, argv[0], &data, &len)) return fail(env, "worksnap native: expected a Uint8Array");
  return number(env, (double)longest_run(data, len, (uint8_t)num(env, argv[1])));
}

/*
 * Directory-descriptor operations (dirfd.h, src/repo/dir-handle.ts). Each
 * returns at once with a number: a descriptor, 0, or an errno (negated where a
 * descriptor could have been returned); names are single components (or, for
 * dirOpenBeneath, a relative path) of at most PATH_MAX bytes.
 */
static int string_arg(napi_env env, napi_value v, char *buf, size_t cap) {
  size_t len = 0;
  if (napi_get_value_string_utf8(env, v, buf, cap, &len) != napi_ok) return -EINVAL;
  if (len + 1 >= cap) return -ENAMETOOLONG;
  return 0;
}

static int int_arg(napi_env env, napi_value v) {
  int32_t i = -1;
  napi_get_value_int32(env, v, &i);
  return i;
}

/* A call taking (dirfd, name, ...): its arguments read, the name into `name`; 0, or the errno that refuses them. */
static int fd_name(napi_env env, napi_callback_info info, size_t want, napi_value *argv, int *fd, char *name, size_t cap) {
  if (!args_of(env, info, want, argv)) return -1;
  *fd = int_arg(env, argv[0]);
  return -string_arg(env, argv[1], name, cap);
}

/* The (dirfd, name) arguments of the calls below, read into `fd` and `name`; `bad` is the errno refusing them, or 0. */
#define FD_NAME_ARGS(want)                                           \
  napi_value argv[want];                                             \
  int fd;                                                            \
  char name[4096];                                                   \
  int bad = fd_name(env, info, want, argv, &fd, name, sizeof name); \
  if (bad < 0) return NULL

/* dirOpenBeneath(rootfd, rel): a directory descriptor, or -errno */
static napi_value dir_open_beneath(napi_env env, napi_callback_info info) {
  FD_NAME_ARGS(2);
  if (bad) return number(env, -bad);
  return number(env, dirfd_open_beneath(fd, name));
}

/* openAt(dirfd, name, flags, mode): a descriptor, or -errno (flags and mode as the platform's open(2) takes them) */
static napi_value open_at(napi_env env, napi_callback_info info) {
  FD_NAME_ARGS(4);
  if (bad) return number(env, -bad);
  int out;
  do out = openat(fd, name, int_arg(env, argv[2]) | O_CLOEXEC, (mode_t)int_arg(env, argv[3]));
  while (out < 0 && errno == EINTR);
  return number(env, out < 0 ? -errno : out);
}

/* mkdirAt(dirfd, name, mode): 0 or errno */
static napi_value mkdir_at(napi_env env, napi_callback_info info) {
  FD_NAME_ARGS(3);
  if (bad) return number(env, bad);
  return number(env, mkdirat(fd, name, (mode_t)int_arg(env, argv[2])) == 0 ? 0 : errno);
}

/* unlinkAt(dirfd, name, directory): 0 or errno (directory: rmdir) */
static napi_value unlink_at(napi_env env, napi_callback_info info) {
  FD_NAME_ARGS(3);
  if (bad) return number(env, bad);
  bool dir = false;
  napi_get_value_bool(env, argv[2], &dir);
  return number(env, unlinkat(fd, name, dir ? AT_REMOVEDIR : 0) == 0 ? 0 : errno);
}

/* renameAt(fromfd, from, tofd, to, flags): 0 or errno; flags 1 = no replace, 2 = exchange (ENOSYS where unsupported) */
static napi_value rename_at(napi_env env, napi_callback_info info) {
  FD_NAME_ARGS(5);
  if (bad) return number(env, bad);
  char to[4096];
  bad = -string_arg(env, argv[3], to, sizeof to);
  if (bad) return number(env, bad);
  return number(env, dirfd_rename(fd, name, int_arg(env, argv[2]), to, int_arg(env, argv[4])));
}

/* symlinkAt(target bytes, dirfd, name): 0 or errno */
static napi_value symlink_at(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  if (!args_of(env, info, 3, argv)) return NULL;
  void *data;
  size_t len;
  if (!bytes_of(env, argv[0], &data, &len)) return fail(env, "worksnap native: symlinkAt takes the target as a Uint8Array");
  char target[4096], name[4096];
  if (len + 1 > sizeof target || memchr(data, 0, len)) return number(env, len + 1 > sizeof target ? ENAMETOOLONG : EINVAL);
  memcpy(target, data, len);
  target[len] = 0;
  int bad = string_arg(env, argv[2], name, sizeof name);
  if (bad) return number(env, -bad);
  return number(env, symlinkat(target, int_arg(env, argv[1]), name) == 0 ? 0 : errno);
}

/* readlinkAt(dirfd, name): the link text as a Buffer, or an errno */
static napi_value readlink_at(napi_env env, napi_callback_info info) {
  FD_NAME_ARGS(2);
  if (bad) return number(env, bad);
  char target[4096];
  ssize_t n = readlinkat(fd, name, target, sizeof target);
  if (n < 0) return number(env, errno);
  if ((size_t)n >= sizeof target) return number(env, ENAMETOOLONG);
  napi_value buf;
  void *out;
  CHECK(napi_create_buffer_copy(env, (size_t)n, target, &out, &buf));
  return buf;
}

/* lstat's numbers (dev, ino, mode, size, mtimeMs, ctimeMs, nlink) into f[0..6]. */
static void put_stat(double *f, const struct stat *st) {
  f[0] = (double)st->st_dev;
  f[1] = (double)st->st_ino;
  f[2] = (double)st->st_mode;
  f[3] = (double)st->st_size;
  f[4] = stat_ms(ST_MTIME(*st));
  f[5] = stat_ms(ST_CTIME(*st));
  f[6] = (double)st->st_nlink;
}

/* lstat's numbers (put_stat) as a new Float64Array; NULL with an exception pending. */
static napi_value stat_numbers(napi_env env, const struct stat *st) {
  double *f;
  napi_value arr = typed_array(env, napi_float64_array, sizeof(double), 7, (void **)&f);
  if (arr) put_stat(f, st);
  return arr;
}

static void release_carved(napi_env env, void *data, void *hint) {
  (void)env;
  (void)data;
  populated_release(hint);
}

/*
 * Bytes handed to JavaScript as a Uint8Array without a copy, `release(env, data, hint)` called when it is collected;
 * an empty array for none. NULL with an exception pending when it cannot be made (`release` called at once).
 */
static napi_value external_bytes(napi_env env, uint8_t *data, size_t len, napi_finalize release, void *hint) {
  napi_value b;
  if (len > 0 && napi_create_external_buffer(env, len, data, release, hint, &b) == napi_ok) return b;
  release(env, data, hint);
  if (len > 0) return throw_(env, "napi_create_external_buffer");
  void *none;
  CHECK(napi_create_buffer(env, 0, &none, &b));
  return b;
}

/* Bytes carved from a populated block (populated.h), the array holding one reference to the block. */
static napi_value carved_bytes(napi_env env, uint8_t *data, size_t len, populated_t *owner) { return external_bytes(env, data, len, release_carved, owner); }

/* malloc'd bytes (read_fd_to_end), the array owning them (freed when it is collected). */
static napi_value owned_bytes(napi_env env, uint8_t *data, size_t len) { return external_bytes(env, data, len, free_kept, NULL); }

/* carved_bytes as a Uint8Array (not a Buffer), as typed_array makes them. */
static napi_value carved_array(napi_env env, uint8_t *data, size_t len, populated_t *owner) {
  napi_value ab, arr;
  if (napi_create_external_arraybuffer(env, data, len, release_carved, owner, &ab) != napi_ok) {
    populated_release(owner);
    return throw_(env, "napi_create_external_arraybuffer");
  }
  CHECK(napi_create_typedarray(env, napi_uint8_array, len, ab, 0, &arr));
  return arr;
}

/*
 * readFileAt(dirfd, name, flags): a file opened (flags as open(2) takes them),
 * its fstat and its bytes to the end, in one call (dir-handle.ts readFile):
 * [the fstat numbers as lstatAt gives them, the bytes or null when it is not
 * a regular file]; the errno when the open fails, -errno when fstat or a read does.
 */
/* From this size a file readFileAt reads gets a populated block of its own. */
#define POPULATED_READ_MIN (256u << 10)

static napi_value read_file_at(napi_env env, napi_callback_info info) {
  FD_NAME_ARGS(3);
  if (bad) return number(env, bad);
  int f;
  do f = openat(fd, name, int_arg(env, argv[2]) | O_CLOEXEC, 0);
  while (f < 0 && errno == EINTR);
  if (f < 0) return number(env, errno);
  struct stat st;
  napi_value numbers = NULL, bytes = NULL;
  int err = fstat(f, &st) == 0 ? 0 : -errno;
  uint8_t *data = NULL;
  size_t len = 0;
  populated_t *owner = NULL;
  /* a large file's pages made present in one call (populated.h), not faulted in one at a time */
  if (!err && S_ISREG(st.st_mode))
    err = (size_t)st.st_size >= POPULATED_READ_MIN ? read_fd_populated(f, (size_t)st.st_size, &data, &len, &owner) : read_fd_to_end(f, (size_t)st.st_size, &data, &len);
  close(f);
  if (err) return err == -ENOMEM ? fail(env, "worksnap native: out of memory reading a file") : number(env, err);
  if ((numbers = stat_numbers(env, &st)) == NULL) {
    if (owner) populated_release(owner);
    else free(data);
    return NULL;
  }
  bytes = !data ? null_value(env) : owner ? carved_bytes(env, data, len, owner) : owned_bytes(env, data, len);
  return bytes ? pair_of(env, numbers, bytes) : NULL;
}

/* lstatAt(dirfd, name): [dev, ino, mode, size, mtimeMs, ctimeMs, nlink] of the name itself (a symlink is not followed), or an errno */
static napi_value lstat_at(napi_env env, napi_callback_info info) {
  FD_NAME_ARGS(2);
  if (bad) return number(env, bad);
  struct stat st;
  if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return number(env, errno);
  return stat_numbers(env, &st);
}

/* The one argument of a call taking a live job of one kind (its run function); NULL with an exception pending. */
static job_t *job_of(napi_env env, napi_callback_info info, void (*run)(job_t *, size_t, worker_t *), const char *not_kind) {
  napi_value argv[1];
  job_t *job = job_arg(env, info, 1, argv);
  if (job && job->run != run) {
    fail(env, not_kind);
    return NULL;
  }
  return job;
}

/* A copy of a job's records once every item is finished; null while it runs. */
static napi_value copy_when_done(napi_env env, job_t *job, const uint8_t *records, size_t bytes) {
  napi_value buf;
  if (job_ready_prefix(job) < job->count) {
    napi_get_null(env, &buf);
    return buf;
  }
  void *out;
  CHECK(napi_create_buffer_copy(env, bytes, records, &out, &buf));
  return buf;
}

/* statStart(root, paths, count): lstat of each path under root (stat_job.h) */
static napi_value stat_start(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  if (!args_of(env, info, 3, argv)) return NULL;
  char root[4096];
  size_t root_len = 0;
  CHECK(napi_get_value_string_utf8(env, argv[0], root, sizeof root, &root_len));
  if (root_len >= sizeof root - 1) return fail(env, "worksnap native: root path too long");
  void *paths;
  size_t paths_len;
  if (!bytes_of(env, argv[1], &paths, &paths_len)) return fail(env, "worksnap native: paths must be a Uint8Array");
  double count = num(env, argv[2]);
  if (!(count >= 0)) return fail(env, "worksnap native: bad count");
  int dirfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0) return fail(env, "worksnap native: cannot open the root directory");
  stat_job_t *job = stat_job_new(paths, paths_len, (size_t)count, dirfd);
  if (!job) return fail(env, "worksnap native: out of memory");
  pool_submit_first(&job->base); // an lstat per item: short, and what a running hash job may be waiting for
  return wrap(env, &job->base);
}

/* statRecords(job): a copy of every file's record once the job is done; null while it runs */
static napi_value stat_records(napi_env env, napi_callback_info info) {
  job_t *job = job_of(env, info, stat_job_run, "worksnap native: not a stat job");
  if (!job) return NULL;
  return copy_when_done(env, job, ((stat_job_t *)job)->records, ((stat_job_t *)job)->files * STAT_RECORD);
}

/*
 * createStart(dirfd, paths, count, data, ends, mode): new files beneath the directory `dirfd` (duplicated: the
 * caller's stays its own), item i at paths[i] with data[ends[i-1], ends[i]) (create_job.h)
 */
static napi_value create_start(napi_env env, napi_callback_info info) {
  napi_value argv[6];
  if (!args_of(env, info, 6, argv)) return NULL;
  int dirfd = int_arg(env, argv[0]);
  void *paths, *data, *ends;
  size_t paths_len, data_len, ends_len;
  if (!bytes_of(env, argv[1], &paths, &paths_len) || !bytes_of(env, argv[3], &data, &data_len) || !bytes_of(env, argv[4], &ends, &ends_len)) {
    return fail(env, "worksnap native: paths, data and ends must be typed arrays");
  }
  double count = num(env, argv[2]);
  if (!(count >= 0) || ends_len != (size_t)count * sizeof(double)) return fail(env, "worksnap native: bad count");
  const double *e = ends;
  for (size_t i = 0; i < (size_t)count; i++) {
    double before = i == 0 ? 0 : e[i - 1];
    if (!(e[i] >= before && e[i] <= (double)data_len) || e[i] != floor(e[i])) return fail(env, "worksnap native: bad ends");
  }
  int own = dirfd >= 0 ? fcntl(dirfd, F_DUPFD_CLOEXEC, 0) : -1;
  if (own < 0) return fail(env, "worksnap native: not an open directory");
  create_job_t *job = create_job_new(paths, paths_len, (size_t)count, own, data, data_len, e, (mode_t)int_arg(env, argv[5]));
  if (!job) return fail(env, "worksnap native: out of memory");
  pool_submit(&job->base);
  return wrap(env, &job->base);
}

/* createRecords(job): a copy of every item's record once the job is done; null while it runs */
static napi_value create_records(napi_env env, napi_callback_info info) {
  job_t *job = job_of(env, info, create_job_run, "worksnap native: not a create job");
  if (!job) return NULL;
  return copy_when_done(env, job, ((create_job_t *)job)->records, job->count * CREATE_RECORD);
}

/*
 * trigramStart(root, paths, files, expects, fileLimit, pairCap, sniff, background): the trigram index's build of
 * `files` files (trigram_job.h); expects holds TRI_EXPECT_SIZE (65) bytes a file. `background`: on the pool's low-priority threads.
 */
static napi_value trigram_start(napi_env env, napi_callback_info info) {
  napi_value argv[8];
  if (!args_of(env, info, 8, argv)) return NULL;
  char root[4096];
  size_t root_len = 0;
  CHECK(napi_get_value_string_utf8(env, argv[0], root, sizeof root, &root_len));
  if (root_len >= sizeof root - 1) return fail(env, "worksnap native: root path too long");
  void *paths, *expects;
  size_t paths_len, expects_len;
  if (!bytes_of(env, argv[1], &paths, &paths_len) || !bytes_of(env, argv[3], &expects, &expects_len))
    return fail(env, "worksnap native: paths and expects must be Uint8Arrays");
  double files = num(env, argv[2]), limit = num(env, argv[4]), cap = num(env, argv[5]), sniff = num(env, argv[6]);
  if (!(files >= 0) || expects_len < (size_t)files * TRI_EXPECT_SIZE || !(limit >= 0) || !(cap >= 1) || !(sniff >= 0))
    return fail(env, "worksnap native: bad trigram job arguments");
  bool background = false;
  napi_get_value_bool(env, argv[7], &background);
  int dirfd = AT_FDCWD;
  if (root_len > 0 && (dirfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) return fail(env, "worksnap native: cannot open the root directory");
  trigram_job_t *job = trigram_job_new(paths, paths_len, (size_t)files, dirfd, expects, (size_t)limit, (size_t)cap, (size_t)sniff);
  if (!job) return fail(env, "worksnap native: out of memory");
  if (background) pool_submit_background(&job->base);
  else pool_submit(&job->base);
  return wrap(env, &job->base);
}

static trigram_job_t *trigram_done(napi_env env, napi_callback_info info, napi_value *argv) {
  job_t *job = job_arg(env, info, 1, argv);
  if (!job) return NULL;
  if (job->run != trigram_job_run) return fail(env, "worksnap native: not a trigram job"), NULL;
  if (job_ready_prefix(job) < job->count) return fail(env, "worksnap native: the trigram job is not done"), NULL;
  return (trigram_job_t *)job;
}

/* trigramRecords(job): a copy of every file's record, once the job is done */
static napi_value trigram_records(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  trigram_job_t *job = trigram_done(env, info, argv);
  if (!job) return NULL;
  napi_value buf;
  void *out;
  CHECK(napi_create_buffer_copy(env, job->files * TRIGRAM_RECORD, job->records, &out, &buf));
  return buf;
}

/* trigramSegment(job): the segment, handed over without a copy (once); null when it was not built */
static napi_value trigram_segment(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  trigram_job_t *job = trigram_done(env, info, argv);
  if (!job) return NULL;
  napi_value out;
  if (!job->segment) {
    napi_get_null(env, &out);
    return out;
  }
  if (napi_create_external_buffer(env, job->segment_len, job->segment, free_kept, NULL, &out) != napi_ok) return throw_(env, "napi_create_external_buffer");
  job->segment = NULL;
  return out;
}

#ifdef __linux__
/*
 * syncfs(2) of a file system on a thread of its own: flushing a change set's
 * files can take 100 ms and more, during which the JavaScript thread goes on
 * (the history's diffs of the same call, other sessions' requests) and polls
 * syncfsResult. Not a pool job: a flush must not wait behind a long hash job
 * of another call.
 */
typedef struct {
  int fd;
  int err;
  atomic_int done;
  atomic_int refs; /* the thread's and the JavaScript handle's */
} syncfs_task_t;

static void syncfs_unref(syncfs_task_t *t) {
  if (atomic_fetch_sub(&t->refs, 1) != 1) return;
  close(t->fd);
  free(t);
}

static void *syncfs_main(void *arg) {
  syncfs_task_t *t = arg;
  t->err = syncfs(t->fd) == 0 ? 0 : errno;
  atomic_store_explicit(&t->done, 1, memory_order_release);
  syncfs_unref(t);
  return NULL;
}

static void syncfs_finalize(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  syncfs_unref(data);
}

/* syncfsStart(fd): starts a syncfs of the file system `fd` is on (the descriptor is duplicated); a handle */
static napi_value syncfs_start(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!args_of(env, info, 1, argv)) return NULL;
  syncfs_task_t *t = calloc(1, sizeof *t);
  if (!t) return fail(env, "worksnap native: out of memory");
  t->fd = fcntl((int)num(env, argv[0]), F_DUPFD_CLOEXEC, 0);
  if (t->fd < 0) {
    char msg[160];
    snprintf(msg, sizeof msg, "worksnap native: cannot duplicate the descriptor to flush: %s", strerror(errno));
    free(t);
    return fail(env, msg);
  }
  atomic_init(&t->done, 0);
  atomic_init(&t->refs, 2);
  pthread_attr_t attr;
  pthread_t thread;
  int started = pthread_attr_init(&attr) == 0 && pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) == 0 &&
                pthread_create(&thread, &attr, syncfs_main, t) == 0;
  pthread_attr_destroy(&attr);
  if (!started) {
    close(t->fd);
    free(t);
    return fail(env, "worksnap native: cannot start a thread to flush");
  }
  napi_value ext;
  if (napi_create_external(env, t, syncfs_finalize, NULL, &ext) != napi_ok) {
    syncfs_unref(t);
    return throw_(env, "napi_create_external");
  }
  return ext;
}

/* syncfsResult(handle): null while the flush runs, then its errno (0: every write-back succeeded) */
static napi_value syncfs_result(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!args_of(env, info, 1, argv)) return NULL;
  void *data = NULL;
  if (napi_get_value_external(env, argv[0], &data) != napi_ok || !data) return fail(env, "worksnap native: not a flush handle");
  syncfs_task_t *t = data;
  if (!atomic_load_explicit(&t->done, memory_order_acquire)) {
    napi_value nul;
    napi_get_null(env, &nul);
    return nul;
  }
  return number(env, t->err);
}
#endif

/*
 * The work tree's watch (tree_watch.h, src/repo/tree-watch.ts): a handle that closes the watch when it is
 * collected, unless closed before.
 */
typedef struct {
  tree_watch_t *w;
} watch_handle_t;

static void watch_finalize(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  watch_handle_t *h = data;
  tree_watch_close(h->w);
  free(h);
}

static watch_handle_t *watch_of(napi_env env, napi_value v) {
  void *data = NULL;
  if (napi_get_value_external(env, v, &data) != napi_ok || !data) {
    fail(env, "worksnap native: not a tree watch");
    return NULL;
  }
  return data;
}

/*
 * treeWatchStart(root, shallow, maxWatches): a handle, or the errno that kept it from starting; `shallow` holds
 * the directories watched without their contents, each NUL-terminated (their bytes as they are)
 */
static napi_value tree_watch_start_of(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  if (!args_of(env, info, 3, argv)) return NULL;
  char root[4096];
  int bad = string_arg(env, argv[0], root, sizeof root);
  if (bad) return number(env, -bad);
  void *names;
  size_t names_len;
  if (!bytes_of(env, argv[1], &names, &names_len)) return fail(env, "worksnap native: shallow must be a Uint8Array");
  if (names_len > 0 && ((const char *)names)[names_len - 1] != 0) return fail(env, "worksnap native: shallow must end with a NUL");
  size_t count = 0;
  for (size_t i = 0; i < names_len; i++) count += ((const char *)names)[i] == 0;
  const char **shallow = malloc((count ? count : 1) * sizeof *shallow);
  if (!shallow) return fail(env, "worksnap native: out of memory");
  for (size_t i = 0, at = 0; i < count; i++) {
    shallow[i] = (const char *)names + at;
    at += strlen(shallow[i]) + 1;
  }
  double max = num(env, argv[2]);
  if (!(max >= 1)) {
    free(shallow);
    return fail(env, "worksnap native: bad watch budget");
  }
  int err = 0;
  tree_watch_t *w = tree_watch_start(root, shallow, count, (size_t)max, &err);
  free(shallow);
  if (!w) return number(env, err);
  watch_handle_t *h = malloc(sizeof *h);
  if (!h) {
    tree_watch_close(w);
    return fail(env, "worksnap native: out of memory");
  }
  h->w = w;
  napi_value ext;
  if (napi_create_external(env, h, watch_finalize, NULL, &ext) != napi_ok) {
    tree_watch_close(w);
    free(h);
    return throw_(env, "napi_create_external");
  }
  return ext;
}

static void free_taken(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  free(data);
}

/* treeWatchTake(handle, waitMs, maxBytes): [flags, errno, paths (Uint8Array, NUL-terminated) or null] */
static napi_value tree_watch_take_of(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  if (!args_of(env, info, 3, argv)) return NULL;
  watch_handle_t *h = watch_of(env, argv[0]);
  if (!h) return NULL;
  if (!h->w) return fail(env, "worksnap native: the tree watch is closed");
  uint8_t *paths = NULL;
  size_t len = 0;
  int err = 0;
  int flags = tree_watch_take(h->w, (int)num(env, argv[1]), (size_t)num(env, argv[2]), &paths, &len, &err);
  napi_value out, taken;
  CHECK(napi_create_array_with_length(env, 3, &out));
  if (paths && len > 0) {
    napi_value ab;
    if (napi_create_external_arraybuffer(env, paths, len, free_taken, NULL, &ab) != napi_ok) {
      free(paths);
      return throw_(env, "napi_create_external_arraybuffer");
    }
    CHECK(napi_create_typedarray(env, napi_uint8_array, len, ab, 0, &taken));
  } else {
    free(paths);
    CHECK(napi_get_null(env, &taken));
  }
  CHECK(napi_set_element(env, out, 0, number(env, flags)));
  CHECK(napi_set_element(env, out, 1, number(env, err)));
  CHECK(napi_set_element(env, out, 2, taken));
  return out;
}

/* treeWatchCount(handle): the watches it holds */
static napi_value tree_watch_count_of(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!args_of(env, info, 1, argv)) return NULL;
  watch_handle_t *h = watch_of(env, argv[0]);
  if (!h) return NULL;
  return number(env, h->w ? (double)tree_watch_count(h->w) : 0);
}

/* treeWatchClose(handle): stops the watch's thread (later calls on the handle fail) */
static napi_value tree_watch_close_of(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!args_of(env, info, 1, argv)) return NULL;
  watch_handle_t *h = watch_of(env, argv[0]);
  if (!h) return NULL;
  tree_watch_close(h->w);
  h->w = NULL;
  return NULL;
}

/* A typed array argument of the given element type: its elements and how many; 0 when it is something else. */
static int typed_of(napi_env env, napi_value v, napi_typedarray_type want, void **data, size_t *count) {
  napi_typedarray_type type;
  size_t offset;
  napi_value ab;
  return napi_get_typedarray_info(env, v, &type, count, data, &ab, &offset) == napi_ok && type == want;
}


/*
 * readManyAt(fds, names, flags, threads): for each (fds[k], names[k]) the
 * name's lstat and, when it is a regular file, the file opened with `flags`,
 * its fstat and its bytes, read on up to `threads` threads (read_many.h):
 * [numbers, errors, bytes, digests] with numbers a Float64Array of 14 per item
 * (lstat, then fstat, each as lstatAt gives them), errors an Int32Array of 3
 * per item (lstat's errno, the read's as read_item_t has it, whether the file
 * was opened), bytes an array of a Uint8Array (regular file) or null per item,
 * digests a Buffer of 32 bytes per item: the SHA-256 of its bytes (zeros where
 * there are none).
 */
static napi_value read_many_at(napi_env env, napi_callback_info info) {
  napi_value argv[4];
  if (!args_of(env, info, 4, argv)) return NULL;
  void *fds;
  size_t n;
  uint32_t names_len = 0;
  bool is_array = false;
  if (!typed_of(env, argv[0], napi_int32_array, &fds, &n) || napi_is_array(env, argv[1], &is_array) != napi_ok || !is_array ||
      napi_get_array_length(env, argv[1], &names_len) != napi_ok || names_len != n) {
    return fail(env, "worksnap native: readManyAt takes an Int32Array of descriptors and as many names");
  }
  read_item_t *items = calloc(n + 1, sizeof *items);
  size_t *name_at = malloc((n + 1) * sizeof *name_at);
  size_t names_cap = 64 * (n + 1), names_used = 0;
  char *names = malloc(names_cap);
  const char *problem = items && name_at && names ? NULL : "worksnap native: out of memory";
  for (size_t k = 0; !problem && k < n; k++) {
    napi_value v;
    size_t len = 0;
    if (napi_get_element(env, argv[1], (uint32_t)k, &v) != napi_ok || napi_get_value_string_utf8(env, v, NULL, 0, &len) != napi_ok) {
      problem = "worksnap native: readManyAt takes names as strings";
      break;
    }
    if (names_used + len + 1 > names_cap) {
      size_t cap = (names_used + len + 1) * 2;
      char *grown = realloc(names, cap);
      if (!grown) {
        problem = "worksnap native: out of memory";
        break;
      }
      names = grown;
      names_cap = cap;
    }
    napi_get_value_string_utf8(env, v, names + names_used, len + 1, &len);
    name_at[k] = names_used;
    names_used += len + 1;
    items[k].dirfd = ((int32_t *)fds)[k];
  }
  if (problem) {
    free(items);
    free(names);
    free(name_at);
    return fail(env, problem);
  }
  for (size_t k = 0; k < n; k++) items[k].name = names + name_at[k];
  double threads = num(env, argv[3]);
  int oom = read_many(items, n, int_arg(env, argv[2]), threads >= 1 && threads <= 64 ? (int)threads : 1, 1);
  free(name_at);
  napi_value out = NULL, numbers, errors, bytes, digests;
  double *f;
  int32_t *e;
  void *d;
  if (!oom && (numbers = typed_array(env, napi_float64_array, sizeof(double), 14 * n, (void **)&f)) && (errors = int32_array(env, 3 * n, &e)) &&
      napi_create_array_with_length(env, n, &bytes) == napi_ok && napi_create_buffer(env, 32 * n + 1, &d, &digests) == napi_ok) {
    size_t k = 0;
    for (; k < n; k++) {
      read_item_t *it = &items[k];
      memset(f + 14 * k, 0, 14 * sizeof(double));
      if (!it->lstat_err) put_stat(f + 14 * k, &it->lstat);
      if (it->opened) put_stat(f + 14 * k + 7, &it->fstat);
      e[3 * k] = it->lstat_err;
      e[3 * k + 1] = it->read_err;
      e[3 * k + 2] = it->opened;
      if (it->data) memcpy((uint8_t *)d + 32 * k, it->digest, 32);
      else memset((uint8_t *)d + 32 * k, 0, 32);
      napi_value b = !it->data ? null_value(env) : it->owner ? carved_bytes(env, it->data, it->len, it->owner) : owned_bytes(env, it->data, it->len);
      it->data = NULL; /* the array owns it now (or it was freed) */
      if (!b || napi_set_element(env, bytes, (uint32_t)k, b) != napi_ok) break;
    }
    if (k == n) {
      napi_value four[4] = {numbers, errors, bytes, digests};
      if (napi_create_array_with_length(env, 4, &out) == napi_ok) {
        for (int i = 0; i < 4; i++) napi_set_element(env, out, (uint32_t)i, four[i]);
      }
    }
  }
  for (size_t k = 0; k < n; k++)
    if (items[k].data) {
      if (items[k].owner) populated_release(items[k].owner);
      else free(items[k].data);
    }
  free(items);
  free(names);
  if (oom) return fail(env, "worksnap native: out of memory reading a file");
  if (!out) return throw_(env, "readManyAt");
  return out;
}

/*
 * placedDiff(a, b, changes, head, context): the unified diff of `a` to `b`
 * rendered from `changes` (an Int32Array of (oldStart, oldEnd, newStart,
 * newEnd) quadruples), after the bytes of `head`; null when the changes do
 * not turn `a` into `b` (placed_diff.h).
 */
static napi_value placed_diff_of(napi_env env, napi_callback_info info) {
  napi_value argv[5];
  if (!args_of(env, info, 5, argv)) return NULL;
  void *a, *b, *head, *changes;
  size_t alen, blen, head_len, count;
  if (!bytes_of(env, argv[0], &a, &alen) || !bytes_of(env, argv[1], &b, &blen) || !bytes_of(env, argv[3], &head, &head_len)) {
    return fail(env, "worksnap native: expected a Uint8Array");
  }
  if (!typed_of(env, argv[2], napi_int32_array, &changes, &count) || count % 4 != 0) {
    return fail(env, "worksnap native: expected an Int32Array of quadruples");
  }
  int32_t context = int_arg(env, argv[4]);
  if (context < 0) return fail(env, "worksnap native: a negative context");
  bytes_t out = {0};
  int ok = placed_diff(a, alen, b, blen, changes, count / 4, head, head_len, context, &out);
  napi_value r;
  if (ok == 1) {
    void *copy;
    napi_status st = napi_create_buffer_copy(env, out.len, out.bytes, &copy, &r);
    free(out.bytes);
    if (st != napi_ok) return throw_(env, "napi_create_buffer_copy");
    return r;
  }
  free(out.bytes);
  return ok < 0 ? fail(env, "worksnap native: out of memory rendering a diff") : null_value(env);
}

/*
 * lineStarts(bytes): where each line of `bytes` starts, then its length (a
 * Uint32Array of lines + 1 numbers; a last line without newline is a line),
 * as patch/lines.ts's FileLines indexes a file; null from 4 GiB on.
 */
static napi_value line_starts_of(napi_env env, napi_callback_info info) {
  void *data;
  size_t len;
  if (!bytes_arg(env, info, &data, &len)) return NULL;
  if (len >= UINT32_MAX) return null_value(env);
  size_t lines = line_count(data, len);
  uint32_t *out;
  napi_value r = typed_array(env, napi_uint32_array, sizeof(uint32_t), lines + 1, (void **)&out);
  if (r) line_starts(data, len, lines, out);
  return r;
}

/* A patch's bytes and its line starts (lineStarts: the last one is the patch's length); 0 when they are not. */
static int patch_of(napi_env env, napi_value bytes, napi_value starts, void **p, uint32_t **st, size_t *lines) {
  size_t plen, count;
  void *s;
  if (!bytes_of(env, bytes, p, &plen) || !typed_of(env, starts, napi_uint32_array, &s, &count) || count == 0 || ((uint32_t *)s)[count - 1] != plen) return 0;
  *st = s;
  *lines = count - 1;
  return 1;
}

/*
 * patchHunks(patch, starts): the hunks of a patch (its bytes and their
 * lineStarts) that read plainly, as an Int32Array of HUNK_FIELDS numbers
 * each: the header's line, oldStart, statedOld, newStart, statedNew, the
 * line after the body (patch_hunks.h).
 */
static napi_value patch_hunks_of(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  if (!args_of(env, info, 2, argv)) return NULL;
  void *p;
  uint32_t *st;
  size_t n, headers = 0;
  if (!patch_of(env, argv[0], argv[1], &p, &st, &n)) return fail(env, "worksnap native: expected a patch and its line starts");
  for (size_t j = 0; j < n; j++) headers += st[j + 1] - st[j] >= 2 && ((uint8_t *)p)[st[j]] == '@' && ((uint8_t *)p)[st[j] + 1] == '@';
  int32_t *scratch = malloc((headers * HUNK_FIELDS + 1) * sizeof(int32_t));
  if (!scratch) return fail(env, "worksnap native: out of memory");
  size_t found = patch_hunks(p, st, n, scratch);
  int32_t *out;
  napi_value r = int32_array(env, found * HUNK_FIELDS, &out);
  if (r && found > 0) memcpy(out, scratch, found * HUNK_FIELDS * sizeof(int32_t));
  free(scratch);
  return r;
}

/*
 * patchApply(file, patch, starts, spec): one file's hunks applied, hunk k's
 * body being patch lines [spec[3k], spec[3k + 1]) and its stated old start
 * spec[3k + 2]: [the new bytes, an Int32Array of each hunk's offset then the
 * placed line changes as quadruples], or null when the TypeScript path must
 * decide (patch_hunks.h).
 */
static napi_value patch_apply_of(napi_env env, napi_callback_info info) {
  napi_value argv[4];
  if (!args_of(env, info, 4, argv)) return NULL;
  void *file, *p, *spec;
  uint32_t *starts;
  size_t flen, lines, nspec;
  if (!bytes_of(env, argv[0], &file, &flen) || !patch_of(env, argv[1], argv[2], &p, &starts, &lines) || !typed_of(env, argv[3], napi_int32_array, &spec, &nspec) ||
      nspec % 3 != 0) {
    return fail(env, "worksnap native: expected a file, a patch, its line starts and hunk triples");
  }
  patch_place_t plan;
  int ok = patch_place(file, flen, p, starts, lines, spec, nspec / 3, &plan);
  napi_value r;
  if (ok < 0) return fail(env, "worksnap native: out of memory applying a patch");
  if (ok == 0) return null_value(env);
  uint8_t *bytes;
  int32_t *numbers;
  napi_value out = typed_array(env, napi_uint8_array, 1, plan.new_size, (void **)&bytes);
  napi_value meta = out ? int32_array(env, plan.hunks + 4 * plan.nchanges, &numbers) : NULL;
  r = meta ? pair_of(env, out, meta) : NULL;
  if (!r) {
    patch_place_free(&plan);
    return NULL;
  }
  patch_splice(&plan, file, flen, p, starts, spec, bytes);
  for (size_t h = 0; h < plan.hunks; h++) numbers[h] = (int32_t)plan.offset[h];
  if (plan.nchanges > 0) memcpy(numbers + plan.hunks, plan.changes, 4 * plan.nchanges * sizeof(int32_t));
  patch_place_free(&plan);
  return r;
}

/*
 * patchApplyMany(files, patch, starts, specs, threads, known): patchApply for
 * many files of one patch at once, on up to `threads` threads (patch_many.h):
 * [results, digests], results[k] being what patchApply(files[k], patch,
 * starts, specs[k]) gives ([new bytes, numbers] or null), digests 64 bytes per
 * file: the SHA-256 of its old bytes (zeros where known[k] is not 0: the caller
 * has it), then of its new bytes (zeros when declined).
 */
static napi_value patch_apply_many_of(napi_env env, napi_callback_info info) {
  napi_value argv[6];
  if (!args_of(env, info, 6, argv)) return NULL;
  void *p, *known;
  uint32_t *starts;
  size_t lines, nknown;
  uint32_t n = 0, nspecs = 0;
  bool files_array = false, specs_array = false;
  if (!patch_of(env, argv[1], argv[2], &p, &starts, &lines) || napi_is_array(env, argv[0], &files_array) != napi_ok || !files_array ||
      napi_is_array(env, argv[3], &specs_array) != napi_ok || !specs_array || napi_get_array_length(env, argv[0], &n) != napi_ok ||
      napi_get_array_length(env, argv[3], &nspecs) != napi_ok || nspecs != n || !typed_of(env, argv[5], napi_uint8_array, &known, &nknown) || nknown != n) {
    return fail(env, "worksnap native: expected files, a patch, its line starts, each file's hunk triples, threads and which old digests are known");
  }
  patch_item_t *items = calloc(n + 1, sizeof *items);
  if (!items) return fail(env, "worksnap native: out of memory");
  for (uint32_t k = 0; k < n; k++) {
    napi_value file, spec;
    void *fdata, *sdata;
    size_t flen, count;
    if (napi_get_element(env, argv[0], k, &file) != napi_ok || napi_get_element(env, argv[3], k, &spec) != napi_ok || !bytes_of(env, file, &fdata, &flen) ||
        !typed_of(env, spec, napi_int32_array, &sdata, &count) || count % 3 != 0) {
      free(items);
      return fail(env, "worksnap native: expected files, a patch, its line starts and each file's hunk triples");
    }
    items[k] = (patch_item_t){.file = fdata, .flen = flen, .spec = sdata, .hunks = count / 3, .old_known = ((uint8_t *)known)[k] != 0};
  }
  double threads = num(env, argv[4]);
  patch_text_t text = {p, starts, lines};
  patch_many_place(items, n, &text, threads >= 1 && threads <= 64 ? (int)threads : 1);
  /* each placed file's arrays, made here (only this thread may), then written on the threads; the new bytes carved
     from one populated block (populated.h), whose pages the threads then write without a fault each */
  napi_value results = NULL, digests = NULL;
  void *dig = NULL;
  size_t total = 0;
  for (uint32_t k = 0; k < n; k++)
    if (items[k].placed == 1) total += (items[k].plan.new_size + 7) & ~(size_t)7;
  carver_t carver = carver_new(total, total);
  int failed = napi_create_array_with_length(env, n, &results) != napi_ok || napi_create_buffer(env, 64 * (size_t)n, &dig, &digests) != napi_ok;
  for (uint32_t k = 0; k < n && !failed; k++) {
    patch_item_t *it = &items[k];
    if (it->placed < 0) {
      failed = 2;
      break;
    }
    napi_value r = NULL;
    if (it->placed == 0) r = null_value(env);
    else {
      int32_t *numbers;
      populated_t *owner = NULL;
      uint8_t *carved = it->plan.new_size > 0 ? carve(&carver, it->plan.new_size, &owner) : NULL;
      napi_value out = carved ? carved_array(env, carved, it->plan.new_size, owner) : typed_array(env, napi_uint8_array, 1, it->plan.new_size, (void **)&it->out);
      if (carved && out) it->out = carved;
      napi_value meta = out ? int32_array(env, it->plan.hunks + 4 * it->plan.nchanges, &numbers) : NULL;
      r = meta ? pair_of(env, out, meta) : NULL;
      if (r) {
        for (size_t h = 0; h < it->plan.hunks; h++) numbers[h] = (int32_t)it->plan.offset[h];
        if (it->plan.nchanges > 0) memcpy(numbers + it->plan.hunks, it->plan.changes, 4 * it->plan.nchanges * sizeof(int32_t));
      } else it->out = NULL;
    }
    if (!r || napi_set_element(env, results, k, r) != napi_ok) failed = 1;
  }
  carver_done(&carver);
  if (failed) {
    for (uint32_t k = 0; k < n; k++) {
      items[k].out = NULL; /* nothing is written: the plans are only freed */
      if (items[k].placed == 1) patch_place_free(&items[k].plan);
    }
    free(items);
    return failed == 2 ? fail(env, "worksnap native: out of memory applying a patch") : throw_(env, "napi_create_array");
  }
  patch_many_splice(items, n, &text, threads >= 1 && threads <= 64 ? (int)threads : 1);
  for (uint32_t k = 0; k < n; k++) {
    memcpy((uint8_t *)dig + 64 * (size_t)k, items[k].old_digest, 32);
    memcpy((uint8_t *)dig + 64 * (size_t)k + 32, items[k].new_digest, 32);
  }
  free(items);
  return pair_of(env, results, digests);
}

/*
 * manifestColumns(text): null | [count, rows, modes]: a manifest as captures write it, without escapes, as columns
 * (manifest_columns.h): `rows` (Uint32Array, MANIFEST_ROW an entry: where its blob id starts in the text, where its
 * path starts, the path's length, the first entry with the same blob id), `modes` (Uint8Array: 0 none, 1 "100755",
 * 2 "120000"); null for any other text (parse it as JSON).
 */
static napi_value manifest_columns_of(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!args_of(env, info, 1, argv)) return NULL;
  void *text;
  size_t len;
  if (!bytes_of(env, argv[0], &text, &len)) return fail(env, "worksnap native: manifestColumns takes a Uint8Array");
  manifest_columns_t c;
  int got = manifest_columns(text, len, &c);
  if (got < 0) return fail(env, "worksnap native: out of memory");
  if (got == 0) return null_value(env);
  /* each column becomes an array over its own memory, freed when collected (free_taken) */
  napi_value rows_ab, modes_ab, rows, modes, out;
  size_t rows_bytes = c.count * MANIFEST_ROW * sizeof(uint32_t);
  if (napi_create_external_arraybuffer(env, c.rows, rows_bytes ? rows_bytes : 1, free_taken, NULL, &rows_ab) != napi_ok) {
    manifest_columns_free(&c);
    return throw_(env, "napi_create_external_arraybuffer");
  }
  if (napi_create_external_arraybuffer(env, c.modes, c.count ? c.count : 1, free_taken, NULL, &modes_ab) != napi_ok) {
    free(c.modes);
    return throw_(env, "napi_create_external_arraybuffer");
  }
  CHECK(napi_create_typedarray(env, napi_uint32_array, c.count * MANIFEST_ROW, rows_ab, 0, &rows));
  CHECK(napi_create_typedarray(env, napi_uint8_array, c.count, modes_ab, 0, &modes));
  CHECK(napi_create_array_with_length(env, 3, &out));
  CHECK(napi_set_element(env, out, 0, number(env, (double)c.count)));
  CHECK(napi_set_element(env, out, 1, rows));
  CHECK(napi_set_element(env, out, 2, modes));
  return out;
}

/*
 * recordSizes(records, recordBytes, shaAt, sizeAt, ids): Float64Array, each id's size in the records (a blob's
 * SHA-256 at shaAt, its size a double at sizeAt: manifest_columns.h record_sizes); -1 when not there, -2 for an id
 * not "sha256:" and 64 lowercase hex digits.
 */
static napi_value record_sizes_of(napi_env env, napi_callback_info info) {
  napi_value argv[5];
  if (!args_of(env, info, 5, argv)) return NULL;
  void *records;
  size_t records_len;
  uint32_t n = 0;
  bool listed = false;
  double record_bytes = num(env, argv[1]), sha_at = num(env, argv[2]), size_at = num(env, argv[3]);
  if (!bytes_of(env, argv[0], &records, &records_len) || napi_is_array(env, argv[4], &listed) != napi_ok || !listed ||
      napi_get_array_length(env, argv[4], &n) != napi_ok || !(record_bytes >= 40 && record_bytes <= 4096) || !(sha_at >= 0 && sha_at + 32 <= record_bytes) ||
      !(size_at >= 0 && size_at + 8 <= record_bytes))
    return fail(env, "worksnap native: recordSizes takes records, their layout and the ids");
  /* the ids one after the other, MANIFEST_ID_BYTES each; one of another length is left as zeros (not an id) */
  uint8_t *ids = calloc(n ? n : 1, MANIFEST_ID_BYTES);
  if (!ids) return fail(env, "worksnap native: out of memory");
  for (uint32_t i = 0; i < n; i++) {
    napi_value v;
    char one[MANIFEST_ID_BYTES + 2];
    size_t len = 0;
    if (napi_get_element(env, argv[4], i, &v) != napi_ok || napi_get_value_string_latin1(env, v, one, sizeof one, &len) != napi_ok) {
      free(ids);
      return fail(env, "worksnap native: recordSizes: an id is not a string");
    }
    if (len == MANIFEST_ID_BYTES) memcpy(ids + (size_t)i * MANIFEST_ID_BYTES, one, MANIFEST_ID_BYTES);
  }
  double *sizes;
  napi_value out = typed_array(env, napi_float64_array, sizeof(double), n, (void **)&sizes);
  int got = out ? record_sizes(records, records_len / (size_t)record_bytes, (size_t)record_bytes, (size_t)sha_at, (size_t)size_at, ids, n, sizes) : 0;
  free(ids);
  if (!out) return NULL;
  return got == 0 ? out : fail(env, "worksnap native: out of memory");
}

/*
 * jsonLongStrings(text, minBytes): where the string literals of a JSON text
 * whose source is at least minBytes long are: [start, end, ascii, ...] (the
 * opening quote, one past the closing one, 1 when the value is ASCII), or
 * null when the text is not one it can vouch for and must be parsed as it is
 * (json_strings.h). The text is only read.
 */
static napi_value json_long_strings_of(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  if (!args_of(env, info, 2, argv)) return NULL;
  void *text;
  size_t len;
  double min = num(env, argv[1]);
  if (!bytes_of(env, argv[0], &text, &len) || !(min >= 2)) return fail(env, "worksnap native: expected a JSON text and a length");
  json_span_t found[JSON_STRINGS_MAX];
  int n = json_long_strings(text, len, (size_t)min, found);
  if (n < 0) return null_value(env);
  double *out;
  napi_value r = typed_array(env, napi_float64_array, sizeof(double), (size_t)n * 3, (void **)&out);
  for (int i = 0; r && i < n; i++) {
    out[i * 3] = (double)found[i].start;
    out[i * 3 + 1] = (double)found[i].end;
    out[i * 3 + 2] = found[i].ascii;
  }
  return r;
}

/*
 * Node-API 10's external strings (a string over memory it does not copy, `finalize` called when it is
 * collected), declared weak: where the runtime lacks them the strings are copied.
 */
extern napi_status node_api_create_external_string_latin1(napi_env env, char *str, size_t length, napi_finalize finalize, void *hint,
                                                          napi_value *result, bool *copied) __attribute__((weak));
extern napi_status node_api_create_external_string_utf16(napi_env env, char16_t *str, size_t length, napi_finalize finalize, void *hint,
                                                         napi_value *result, bool *copied) __attribute__((weak));

/* An external string over memory of `owner` (a reference taken for it); 0 when the runtime cannot make one. */
static int external_string(napi_env env, void *at, size_t len, int latin1, populated_t *owner, napi_value *v) {
  if (!owner || len == 0 || !(latin1 ? node_api_create_external_string_latin1 != NULL : node_api_create_external_string_utf16 != NULL)) return 0;
  bool copied = false;
  populated_retain(owner);
  /* on failure the finalizer is not called; where the runtime copied instead, it has been */
  napi_status st = latin1 ? node_api_create_external_string_latin1(env, at, len, release_carved, owner, v, &copied)
                          : node_api_create_external_string_utf16(env, at, len, release_carved, owner, v, &copied);
  if (st == napi_ok) return 1;
  populated_release(owner);
  return 0;
}

/*
 * A decoded string's JavaScript string, `at` its UTF-8 bytes: ASCII in `text_block` (the block of the text they
 * were decoded in, or NULL) is an external string over them; other text is made UTF-16 in a populated block of
 * its own and an external string over that; else a copy. NULL with an exception pending.
 */
static napi_value decoded_string(napi_env env, const uint8_t *at, size_t len, int ascii, populated_t *text_block) {
  napi_value v;
  if (ascii && external_string(env, (void *)at, len, 1, text_block, &v)) return v;
  if (!ascii && len > 0 && node_api_create_external_string_utf16) {
    carver_t carver = carver_new(len * 2, len * 2);
    populated_t *owner = NULL;
    uint16_t *units = (uint16_t *)carve(&carver, len * 2, &owner);
    carver_done(&carver);
    if (units) {
      int made = external_string(env, units, utf8_to_utf16(at, len, units), 0, owner, &v);
      populated_release(owner);
      if (made) return v;
    }
  }
  CHECK(ascii ? napi_create_string_latin1(env, (const char *)at, len, &v) : napi_create_string_utf8(env, (const char *)at, len, &v));
  return v;
}

/*
 * jsonDecodeStrings(text, spans, block): the strings jsonLongStrings found, decoded in place in the text (which
 * they overwrite: the caller is done with those bytes), each followed by its UTF-8 bytes (a view of the text):
 * [string, bytes, string, bytes, ...]. `block` is what joinBytes gave with the text, or null: an ASCII string
 * in a joined text is made over its bytes there, not copied (a 1.4 MB patch's copy cost 5-12 ms of page faults
 * on a VM whose faults trap to the host); a string with other characters is made UTF-16 in memory whose pages
 * are made present in one call.
 */
static napi_value json_decode_strings_of(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  if (!args_of(env, info, 3, argv)) return NULL;
  void *text, *spans;
  size_t len, n, view_len, offset;
  napi_typedarray_type type;
  napi_value buffer;
  if (!bytes_of(env, argv[0], &text, &len) || !typed_of(env, argv[1], napi_float64_array, &spans, &n) || n % 3 != 0 ||
      napi_get_typedarray_info(env, argv[0], &type, &view_len, &text, &buffer, &offset) != napi_ok || type != napi_uint8_array) {
    return fail(env, "worksnap native: expected a JSON text and its long strings");
  }
  const double *sp = spans;
  for (size_t i = 0; i < n; i += 3) {
    int ordered = sp[i] >= (i ? sp[i - 2] : 0) && sp[i] + 2 <= sp[i + 1] && sp[i + 1] <= (double)len;
    if (!ordered || ((uint8_t *)text)[(size_t)sp[i]] != '"' || ((uint8_t *)text)[(size_t)sp[i + 1] - 1] != '"') return fail(env, "worksnap native: not the text's long strings");
  }
  /* the block only when the text lies in it: anything else is copied */
  populated_t *block = NULL;
  napi_valuetype kind;
  if (napi_typeof(env, argv[2], &kind) == napi_ok && kind == napi_external) {
    void *b = NULL;
    if (napi_get_value_external(env, argv[2], &b) == napi_ok && b && populated_holds(b, text, len)) block = b;
  }
  napi_value list;
  CHECK(napi_create_array_with_length(env, n / 3 * 2, &list));
  for (size_t i = 0; i < n; i += 3) {
    json_span_t s = {(size_t)sp[i], (size_t)sp[i + 1], sp[i + 2] != 0};
    size_t got = json_decode_span(text, &s);
    napi_value str = decoded_string(env, (const uint8_t *)text + s.start, got, s.ascii, block), bytes;
    if (!str) return NULL;
    CHECK(napi_create_typedarray(env, napi_uint8_array, got, buffer, offset + s.start, &bytes));
    CHECK(napi_set_element(env, list, (uint32_t)(i / 3 * 2), str));
    CHECK(napi_set_element(env, list, (uint32_t)(i / 3 * 2 + 1), bytes));
  }
  return list;
}

/*
 * joinBytes(parts): [the parts' bytes one after another in a Buffer carved from a populated block (populated.h),
 * that block (an external holding a reference, for jsonDecodeStrings)]: a message that came in many chunks made
 * whole without faulting its pages in one at a time. Null when no block could be mapped.
 */
static napi_value join_bytes_of(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!args_of(env, info, 1, argv)) return NULL;
  uint32_t count = 0;
  bool is_array = false;
  if (napi_is_array(env, argv[0], &is_array) != napi_ok || !is_array || napi_get_array_length(env, argv[0], &count) != napi_ok) {
    return fail(env, "worksnap native: expected a list of byte arrays");
  }
  size_t total = 0;
  for (uint32_t i = 0; i < count; i++) {
    napi_value el;
    void *data;
    size_t len;
    if (napi_get_element(env, argv[0], i, &el) != napi_ok || !bytes_of(env, el, &data, &len)) return fail(env, "worksnap native: expected a list of byte arrays");
    total += len;
  }
  if (total == 0) return null_value(env);
  carver_t carver = carver_new(total, total);
  populated_t *owner = NULL;
  uint8_t *out = carve(&carver, total, &owner);
  carver_done(&carver);
  if (!out) return null_value(env);
  size_t at = 0;
  for (uint32_t i = 0; i < count && at < total; i++) {
    napi_value el;
    void *data = NULL;
    size_t len = 0;
    if (napi_get_element(env, argv[0], i, &el) == napi_ok && bytes_of(env, el, &data, &len)) {
      if (len > total - at) len = total - at;
      memcpy(out + at, data, len);
      at += len;
    }
  }
  napi_value handle, pair, bytes;
  populated_retain(owner);
  /* the same release as a carved array's: the block is the hint */
  if (napi_create_external(env, owner, release_carved, owner, &handle) != napi_ok) {
    populated_release(owner);
    populated_release(owner);
    return throw_(env, "napi_create_external");
  }
  bytes = carved_bytes(env, out, at, owner);
  if (!bytes) return NULL;
  CHECK(napi_create_array_with_length(env, 2, &pair));
  CHECK(napi_set_element(env, pair, 0, bytes));
  CHECK(napi_set_element(env, pair, 1, handle));
  return pair;
}

/* isatty(fd): whether the descriptor is a terminal (the CLI's colours and progress), without the runtime's tty module */
static napi_value isatty_of(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!args_of(env, info, 1, argv)) return NULL;
  napi_value r;
  napi_get_boolean(env, isatty(int_arg(env, argv[0])) == 1, &r);
  return r;
}

static napi_value describe(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value obj, sha, threads;
  CHECK(napi_create_object(env, &obj));
  CHECK(napi_create_string_utf8(env, sha256_accelerated() ? "sha-ni" : "portable", NAPI_AUTO_LENGTH, &sha));
  CHECK(napi_create_int32(env, pool_threads(), &threads));
  CHECK(napi_set_named_property(env, obj, "sha256", sha));
  CHECK(napi_set_named_property(env, obj, "threads", threads));
  return obj;
}

/* The layouts the TypeScript side reads records with, so the two never disagree silently. */
static napi_value layout(napi_env env) {
  napi_value obj;
  if (napi_create_object(env, &obj) != napi_ok) return NULL;
  const struct { const char *name; double value; } fields[] = {
      {"HASH_RECORD", HASH_RECORD}, {"HR_STATUS", HR_STATUS}, {"HR_EXEC", HR_EXEC}, {"HR_HASHED", HR_HASHED},
      {"HR_TRUSTED", HR_TRUSTED}, {"HR_ERRNO", HR_ERRNO}, {"HR_SIZE", HR_SIZE}, {"HR_MTIME", HR_MTIME},
      {"HR_CTIME", HR_CTIME}, {"HR_INO", HR_INO}, {"HR_SHA256", HR_SHA256}, {"HR_GIT", HR_GIT},
      {"SCAN_RECORD", SCAN_RECORD}, {"SR_KIND", SR_KIND}, {"SR_DIGEST", SR_DIGEST}, {"SR_SAME", SR_SAME},
      {"SR_REMEMBER", SR_REMEMBER}, {"SR_ERRNO", SR_ERRNO}, {"SR_LENGTH", SR_LENGTH}, {"SR_STAMP", SR_STAMP},
      {"SR_SHA256", SR_SHA256}, {"SR_OFFSET", SR_OFFSET},
      {"TRI_EXPECT_SIZE", TRI_EXPECT_SIZE}, {"TRIGRAM_RECORD", TRIGRAM_RECORD}, {"TR_STATUS", TR_STATUS}, {"TR_ERRNO", TR_ERRNO}, {"TR_SIZE", TR_SIZE},
      {"TR_COUNT", TR_COUNT}, {"TR_SHA256", TR_SHA256}, {"STAT_RECORD", STAT_RECORD}, {"SJ_STATUS", SJ_STATUS},
      {"SJ_SIZE", SJ_SIZE}, {"SJ_MTIME", SJ_MTIME}, {"SJ_CTIME", SJ_CTIME}, {"SJ_INO", SJ_INO},
      {"CREATE_RECORD", CREATE_RECORD}, {"CJ_STEP", CJ_STEP}, {"CJ_ERRNO", CJ_ERRNO},
      {"LR_FIELDS", LR_FIELDS}, {"LR_NON_ASCII", LR_NON_ASCII}, {"LR_MAY_BE_RESERVED", LR_MAY_BE_RESERVED},
  };
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) napi_set_named_property(env, obj, fields[i].name, number(env, fields[i].value));
  return obj;
}

NAPI_MODULE_INIT() {
  sha256_select(1);
  sha1_select(1);
  search_select();
  const struct { const char *name; napi_callback fn; } fns[] = {
      {"hashStart", hash_start}, {"hashStartListing", hash_start_listing}, {"listingRecords", listing_records_of}, {"scanStart", scan_start}, {"ready", ready}, {"hashRecords", hash_records},
      {"scanCollect", scan_collect}, {"release", release}, {"scanKinds", scan_kinds}, {"notify", notify}, {"watch", watch}, {"sha256", sha256_once}, {"gitBlobId", git_blob_id},
      {"describe", describe}, {"accelerate", accelerate}, {"trimMemory", trim_memory}, {"keepFreedMemory", keep_freed_memory}, {"countByte", count_byte_of}, {"longestRun", longest_run_of},
      {"trigramStart", trigram_start}, {"trigramRecords", trigram_records}, {"trigramSegment", trigram_segment},
      {"statStart", stat_start}, {"statRecords", stat_records}, {"createStart", create_start}, {"batchBlock", batch_block}, {"createRecords", create_records},
      {"dirOpenBeneath", dir_open_beneath}, {"openAt", open_at}, {"mkdirAt", mkdir_at}, {"unlinkAt", unlink_at},
      {"renameAt", rename_at}, {"treeWatchStart", tree_watch_start_of}, {"treeWatchTake", tree_watch_take_of}, {"treeWatchCount", tree_watch_count_of}, {"treeWatchClose", tree_watch_close_of}, {"symlinkAt", symlink_at}, {"readlinkAt", readlink_at}, {"lstatAt", lstat_at}, {"readFileAt", read_file_at}, {"scanBlock", scan_block}, {"sinkPutScanned", sink_put_scanned}, {"manifestColumns", manifest_columns_of}, {"recordSizes", record_sizes_of}, {"slotSpares", slot_spares}, {"readManyAt", read_many_at}, {"placedDiff", placed_diff_of}, {"lineStarts", line_starts_of}, {"sha256Many", sha256_many_of}, {"patchHunks", patch_hunks_of}, {"patchApply", patch_apply_of}, {"patchApplyMany", patch_apply_many_of}, {"isatty", isatty_of}, {"jsonLongStrings", json_long_strings_of}, {"jsonDecodeStrings", json_decode_strings_of}, {"joinBytes", join_bytes_of},
#ifdef __linux__
      {"syncfsStart", syncfs_start}, {"syncfsResult", syncfs_result},
#endif
  };
  for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
    napi_value fn;
    if (napi_create_function(env, fns[i].name, NAPI_AUTO_LENGTH, fns[i].fn, NULL, &fn) != napi_ok) return NULL;
    if (napi_set_named_property(env, exports, fns[i].name, fn) != napi_ok) return NULL;
  }
  if (!sink_register(env, exports)) return NULL;
  napi_value l = layout(env);
  if (l) napi_set_named_property(env, exports, "layout", l);
  napi_value version;
  if (napi_create_int32(env, 22, &version) == napi_ok) napi_set_named_property(env, exports, "version", version);
  return exports;
}
