/* The sink's Node-API functions (sink_napi.c), added to the module's exports by binding.c. */
#ifndef WORKSNAP_SINK_NAPI_H
#define WORKSNAP_SINK_NAPI_H

#include <node_api.h>

#include "sink.h"

/* Adds sinkOpen, sinkWrite, sinkQueued, sinkClose, sinkResult and sinkFree to `exports`; 0 on failure. */
int sink_register(napi_env env, napi_value exports);

/* The sink a value made by sinkOpen holds; NULL when it is not one or was freed (no exception set). */
sink_t *sink_napi_value(napi_env env, napi_value v);

#endif
