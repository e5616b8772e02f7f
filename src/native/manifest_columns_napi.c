/*
 * Node-API for manifest_columns.h:
 *   manifestColumns(text) -> null | [count, rows, modes]
 *                          a canonical manifest without escapes as columns: `rows` (Uint32Array, 4 an entry: where
 *                          its blob id starts in the text, where its path starts, the path's length, the first entry
 *                          with the same blob id), `modes` (Uint8Array: 0 none, 1 "100755", 2 "120000"); null for
 *                          any other text (parse it as JSON)
 *   recordSizes(records, recordBytes, shaAt, sizeAt, ids: string[]) -> Float64Array
 *                          each id's size in the records (-1 when not there, -2 for an id not as manifestColumns
 *                          gives them: "sha256:" and 64 lowercase hex digits)
 */
#define NAPI_VERSION 8
#include <node_api.h>

#include <stdlib.h>
#include <string.h>

#include "manifest_columns.h"
#include "manifest_columns_napi.h"

static napi_value fail(napi_env env, const char *msg) {
  napi_throw_error(env, NULL, msg);
  return NULL;
}

static void free_data(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  free(data);
}

/* A typed array over `data` (malloc'd; freed when collected, or here when that fails; NULL is taken as empty). */
static int typed_over(napi_env env, napi_typedarray_type type, void *data, size_t bytes, size_t unit, napi_value *out) {
  napi_value ab;
  if (bytes == 0) {
    free(data);
    void *unused;
    if (napi_create_arraybuffer(env, 0, &unused, &ab) != napi_ok) return 0;
  } else if (napi_create_external_arraybuffer(env, data, bytes, free_data, NULL, &ab) != napi_ok) {
    free(data);
    return 0;
  }
  return napi_create_typedarray(env, type, bytes / unit, ab, 0, out) == napi_ok;
}

static int bytes_arg(napi_env env, napi_value v, const uint8_t **data, size_t *len) {
  napi_typedarray_type type;
  void *p;
  if (napi_get_typedarray_info(env, v, &type, len, &p, NULL, NULL) != napi_ok || type != napi_uint8_array) return 0;
  *data = p;
  return 1;
}

static napi_value manifest_columns_fn(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  const uint8_t *text;
  size_t len;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1 || !bytes_arg(env, argv[0], &text, &len))
    return fail(env, "worksnap native: manifestColumns takes a Uint8Array");
  manifest_columns_t c;
  int got = manifest_columns(text, len, &c);
  if (got < 0) return fail(env, "worksnap native: out of memory");
  napi_value out, v;
  if (got == 0) {
    napi_get_null(env, &out);
    return out;
  }
  if (napi_create_array_with_length(env, 3, &out) != napi_ok || napi_create_double(env, (double)c.count, &v) != napi_ok || napi_set_element(env, out, 0, v) != napi_ok) {
    manifest_columns_free(&c);
    return fail(env, "worksnap native: manifestColumns: cannot make its answer");
  }
  int ok = typed_over(env, napi_uint32_array, c.rows, c.count * MANIFEST_ROW * sizeof(uint32_t), sizeof(uint32_t), &v) && napi_set_element(env, out, 1, v) == napi_ok;
  if (ok) ok = typed_over(env, napi_uint8_array, c.modes, c.count, 1, &v) && napi_set_element(env, out, 2, v) == napi_ok;
  else free(c.modes);
  return ok ? out : fail(env, "worksnap native: manifestColumns: cannot make its answer");
}

static napi_value record_sizes_fn(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  const uint8_t *records;
  size_t records_len;
  uint32_t n = 0;
  bool listed = false;
  double record_bytes = 0, sha_at = -1, size_at = -1;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 5 || !bytes_arg(env, argv[0], &records, &records_len) ||
      napi_get_value_double(env, argv[1], &record_bytes) != napi_ok || napi_get_value_double(env, argv[2], &sha_at) != napi_ok ||
      napi_get_value_double(env, argv[3], &size_at) != napi_ok || napi_is_array(env, argv[4], &listed) != napi_ok || !listed ||
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
  void *data;
  napi_value ab, out;
  if (napi_create_arraybuffer(env, (size_t)n * sizeof(double), &data, &ab) != napi_ok || napi_create_typedarray(env, napi_float64_array, n, ab, 0, &out) != napi_ok) {
    free(ids);
    return fail(env, "worksnap native: recordSizes: cannot make its answer");
  }
  int got = record_sizes(records, records_len / (size_t)record_bytes, (size_t)record_bytes, (size_t)sha_at, (size_t)size_at, ids, n, data);
  free(ids);
  return got == 0 ? out : fail(env, "worksnap native: out of memory");
}

int manifest_columns_register(napi_env env, napi_value exports) {
  const struct { const char *name; napi_callback fn; } fns[] = {{"manifestColumns", manifest_columns_fn}, {"recordSizes", record_sizes_fn}};
  for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
    napi_value fn;
    if (napi_create_function(env, fns[i].name, NAPI_AUTO_LENGTH, fns[i].fn, NULL, &fn) != napi_ok) return 0;
    if (napi_set_named_property(env, exports, fns[i].name, fn) != napi_ok) return 0;
  }
  return 1;
}
