/* The Node-API functions of manifest_columns.h (manifest_columns_napi.c), added to the module's exports by binding.c. */
#ifndef WORKSNAP_MANIFEST_COLUMNS_NAPI_H
#define WORKSNAP_MANIFEST_COLUMNS_NAPI_H

#include <node_api.h>

/* Adds manifestColumns and recordSizes to `exports`; 0 on failure. */
int manifest_columns_register(napi_env env, napi_value exports);

#endif
