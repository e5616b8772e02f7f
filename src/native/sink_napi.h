/* The sink's Node-API functions (sink_napi.c), added to the module's exports by binding.c. */
#ifndef WORKSNAP_SINK_NAPI_H
#define WORKSNAP_SINK_NAPI_H

#include <node_api.h>

/* Adds sinkOpen, sinkWrite, sinkQueued, sinkClose, sinkResult and sinkFree to `exports`; 0 on failure. */
int sink_register(napi_env env, napi_value exports);

#endif
