/*
 * Node-API surface of the sink (sink.h), registered by binding.c:
 *   sinkOpen(fd, prefix?, step?, durable?) -> sink
 *                                          a thread that writes and hashes what it is given, in order; the
 *                                          digest covers `prefix` (a Uint8Array, not written) first; writeback is
 *                                          started every `step` bytes (default 8 MiB), each step synced if durable
 *   sinkWrite(sink, bytes, release?) -> queued
 *                                          bytes queued (copied, or borrowed: bytes_of_piece); the bytes queued
 *                                          and not yet written
 *   sinkWritev(sink, pieces, total, release?) -> queued
 *                                          the pieces (Uint8Arrays, `total` bytes in all) queued, in order
 *                                          With `release` (sinkWrite: true; sinkWritev: the pieces to release),
 *                                          each such piece that spans its whole ArrayBuffer is detached once
 *                                          copied (napi_detach_arraybuffer): the memory of a buffer read for the
 *                                          sink only (an export's blobs) goes back at once, not when it is
 *                                          collected, and the piece reads as empty afterwards.
 *   sinkQueued(sink) -> queued             the bytes queued and not yet written
 *   sinkClose(sink)                        nothing more will come
 *   sinkResult(sink) -> null | [errno, written, digest]
 *                                          null until closed and everything written (or a write failed)
 *   sinkFree(sink)                         drops what is queued, waits for the thread; idempotent (also at collection)
 * The caller keeps the descriptor open until sinkFree has returned.
 */
#define NAPI_VERSION 8
#include <node_api.h>

#include <stdlib.h>
#include <string.h>

#include "sink.h"
#include "sink_napi.h"
#include "slot_block.h"

typedef struct {
  sink_t *sink;
} sink_handle_t;

static napi_value sink_fail(napi_env env, const char *msg) {
  napi_throw_error(env, NULL, msg);
  return NULL;
}

static void sink_finalize(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  sink_handle_t *h = data;
  if (h->sink) sink_free(h->sink);
  free(h);
}

/* The sink of argument 0 and up to `want` arguments into argv (at least `need` given; the rest undefined); NULL (an exception pending) when it is not a sink. */
static sink_handle_t *sink_args(napi_env env, napi_callback_info info, size_t need, size_t want, napi_value *argv) {
  size_t argc = want;
  void *data = NULL;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < need) {
    sink_fail(env, "worksnap native: missing arguments");
    return NULL;
  }
  if (napi_get_value_external(env, argv[0], &data) != napi_ok || !data) {
    sink_fail(env, "worksnap native: not a sink");
    return NULL;
  }
  return data;
}

/* The sink of argument 0, which must not be freed yet; NULL (an exception pending) otherwise. */
static sink_t *live_sink(napi_env env, napi_callback_info info, size_t need, size_t want, napi_value *argv) {
  sink_handle_t *h = sink_args(env, info, need, want, argv);
  if (h && !h->sink) sink_fail(env, "worksnap native: the sink was freed");
  return h ? h->sink : NULL;
}

sink_t *sink_napi_value(napi_env env, napi_value v) {
  void *data = NULL;
  if (napi_get_value_external(env, v, &data) != napi_ok || !data) return NULL;
  return ((sink_handle_t *)data)->sink;
}

static int truthy(napi_env env, napi_value v) {
  bool b = false;
  return napi_get_value_bool(env, v, &b) == napi_ok && b;
}

/* A Uint8Array's bytes, its ArrayBuffer and where in it the view starts; 0 when `v` is not a Uint8Array. */
typedef struct {
  void *data;
  size_t length, offset;
  napi_value ab;
} piece_t;

static int piece_of(napi_env env, napi_value v, piece_t *p) {
  napi_typedarray_type type;
  return napi_get_typedarray_info(env, v, &type, &p->length, &p->data, &p->ab, &p->offset) == napi_ok && type == napi_uint8_array;
}

/* Pieces at least this long that lie in an export's block of reads are borrowed rather than copied. */
#define BORROW_MIN 4096

static void release_block(void *block) { slot_block_release(block); }

/*
 * A Uint8Array's bytes alone. Asking for its ArrayBuffer gives a small array (a tar header) one of its own: JSC
 * keeps the bytes of an array under 1000 bytes in the collector's heap and moves them into a new buffer the
 * first time anyone asks for it, which was a tenth of an export's JavaScript thread (100,000 headers).
 * Bytes that lie in a live block of an export's reads (slot_block.h: written once by the reads, never changed
 * after) are borrowed, a reference on the block taken: the writer thread writes them from there and lets the
 * block go, where copying them was a gigabyte's memcpy on the JavaScript thread.
 */
static int bytes_of_piece(napi_env env, napi_value v, sink_piece_t *p) {
  napi_typedarray_type type;
  size_t length = 0;
  void *data = NULL;
  if (napi_get_typedarray_info(env, v, &type, &length, &data, NULL, NULL) != napi_ok || type != napi_uint8_array) return 0;
  p->data = data;
  p->len = length;
  slot_block_t *block = length >= BORROW_MIN ? slot_block_borrow(data, length) : NULL;
  p->release = block ? release_block : NULL;
  p->owner = block;
  return 1;
}

/* Detaches the ArrayBuffer of a piece that spans all of it (a view of part of a buffer leaves it alone). */
static void release_piece(napi_env env, const piece_t *p) {
  size_t whole = 0;
  void *data;
  if (p->offset != 0 || napi_get_arraybuffer_info(env, p->ab, &data, &whole) != napi_ok || whole != p->length) return;
  (void)napi_detach_arraybuffer(env, p->ab);
}

static napi_value count_value(napi_env env, size_t n) {
  napi_value v;
  napi_create_double(env, (double)n, &v);
  return v;
}

static napi_value sink_open_fn(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  int32_t fd = -1;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1 || napi_get_value_int32(env, argv[0], &fd) != napi_ok || fd < 0)
    return sink_fail(env, "worksnap native: sinkOpen takes a file descriptor");
  void *prefix = NULL;
  size_t prefix_len = 0;
  double step = 0;
  if (argc > 1) {
    napi_valuetype t;
    napi_typeof(env, argv[1], &t);
    napi_typedarray_type type;
    napi_value ab;
    size_t offset;
    if (t != napi_undefined && t != napi_null && (napi_get_typedarray_info(env, argv[1], &type, &prefix_len, &prefix, &ab, &offset) != napi_ok || type != napi_uint8_array))
      return sink_fail(env, "worksnap native: a sink's prefix is a Uint8Array");
  }
  if (argc > 2 && (napi_get_value_double(env, argv[2], &step) != napi_ok || !(step >= 0))) step = 0;
  bool durable = false;
  if (argc > 3) napi_get_value_bool(env, argv[3], &durable);
  sink_handle_t *h = malloc(sizeof *h);
  if (!h) return sink_fail(env, "worksnap native: out of memory");
  h->sink = sink_open(fd, prefix, prefix_len, (uint64_t)step, durable ? 1 : 0);
  if (!h->sink) {
    free(h);
    return sink_fail(env, "worksnap native: cannot start a writer thread");
  }
  napi_value ext;
  if (napi_create_external(env, h, sink_finalize, NULL, &ext) != napi_ok) {
    sink_free(h->sink);
    free(h);
    return sink_fail(env, "worksnap native: napi_create_external failed");
  }
  return ext;
}

static napi_value sink_write_fn(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  sink_t *sink = live_sink(env, info, 2, 3, argv);
  if (!sink) return NULL;
  sink_piece_t p;
  if (!bytes_of_piece(env, argv[1], &p)) return sink_fail(env, "worksnap native: sinkWrite takes a Uint8Array");
  size_t queued = 0;
  if (!sink_writev(sink, &p, 1, &queued)) return sink_fail(env, "worksnap native: out of memory");
  piece_t whole;
  if (truthy(env, argv[2]) && piece_of(env, argv[1], &whole)) release_piece(env, &whole);
  return count_value(env, queued);
}

static napi_value sink_writev_fn(napi_env env, napi_callback_info info) {
  napi_value argv[4];
  sink_t *sink = live_sink(env, info, 3, 4, argv);
  if (!sink) return NULL;
  uint32_t n = 0;
  double total = 0;
  if (napi_get_array_length(env, argv[1], &n) != napi_ok || napi_get_value_double(env, argv[2], &total) != napi_ok || !(total >= 0))
    return sink_fail(env, "worksnap native: sinkWritev takes an array of Uint8Arrays and their total length");
  sink_piece_t *pieces = malloc((n ? n : 1) * sizeof *pieces);
  if (!pieces) return sink_fail(env, "worksnap native: out of memory");
  size_t cap = (size_t)total, at = 0;
  for (uint32_t i = 0; i < n; i++) {
    napi_value v;
    int ok = napi_get_element(env, argv[1], i, &v) == napi_ok && bytes_of_piece(env, v, &pieces[i]);
    if (!ok || pieces[i].len > cap - at) {
      sink_pieces_release(pieces, ok ? i + 1 : i);
      free(pieces);
      return sink_fail(env, "worksnap native: sinkWritev: a piece is not a Uint8Array, or the pieces exceed the total");
    }
    at += pieces[i].len;
  }
  size_t queued = 0;
  int ok = sink_writev(sink, pieces, n, &queued);
  free(pieces);
  if (!ok) return sink_fail(env, "worksnap native: out of memory");
  uint32_t r = 0;
  bool listed = false;
  if (napi_is_array(env, argv[3], &listed) == napi_ok && listed && napi_get_array_length(env, argv[3], &r) == napi_ok) {
    for (uint32_t i = 0; i < r; i++) {
      napi_value v;
      piece_t p;
      if (napi_get_element(env, argv[3], i, &v) == napi_ok && piece_of(env, v, &p)) release_piece(env, &p);
    }
  }
  return count_value(env, queued);
}

static napi_value sink_queued_fn(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  sink_handle_t *h = sink_args(env, info, 1, 1, argv);
  if (!h) return NULL;
  return count_value(env, h->sink ? sink_queued(h->sink) : 0);
}

static napi_value sink_close_fn(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  sink_handle_t *h = sink_args(env, info, 1, 1, argv);
  if (!h) return NULL;
  if (h->sink) sink_close(h->sink);
  return NULL;
}

static napi_value sink_result_fn(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  sink_handle_t *h = sink_args(env, info, 1, 1, argv);
  if (!h) return NULL;
  napi_value out;
  int err = 0;
  uint64_t written = 0;
  uint8_t digest[32];
  if (!h->sink || !sink_done(h->sink, &err, &written, digest)) {
    napi_get_null(env, &out);
    return out;
  }
  napi_value e, w, d;
  void *copy;
  if (napi_create_array_with_length(env, 3, &out) != napi_ok || napi_create_int32(env, err, &e) != napi_ok ||
      napi_create_double(env, (double)written, &w) != napi_ok || napi_create_buffer_copy(env, 32, digest, &copy, &d) != napi_ok)
    return sink_fail(env, "worksnap native: cannot build the sink's result");
  napi_set_element(env, out, 0, e);
  napi_set_element(env, out, 1, w);
  napi_set_element(env, out, 2, d);
  return out;
}

static napi_value sink_free_fn(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  sink_handle_t *h = sink_args(env, info, 1, 1, argv);
  if (!h) return NULL;
  if (h->sink) sink_free(h->sink);
  h->sink = NULL;
  return NULL;
}

int sink_register(napi_env env, napi_value exports) {
  const struct { const char *name; napi_callback fn; } fns[] = {
      {"sinkOpen", sink_open_fn}, {"sinkWrite", sink_write_fn}, {"sinkWritev", sink_writev_fn}, {"sinkQueued", sink_queued_fn}, {"sinkClose", sink_close_fn}, {"sinkResult", sink_result_fn}, {"sinkFree", sink_free_fn},
  };
  for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
    napi_value fn;
    if (napi_create_function(env, fns[i].name, NAPI_AUTO_LENGTH, fns[i].fn, NULL, &fn) != napi_ok) return 0;
    if (napi_set_named_property(env, exports, fns[i].name, fn) != napi_ok) return 0;
  }
  return 1;
}
