/* SPDX-License-Identifier: BSD-3-Clause */
/* Parts of the JSON record built in json_env.c (see json_record.c). */
#ifndef IOKERNELS_JSON_PARTS_H
#define IOKERNELS_JSON_PARTS_H

#include <jansson.h>

#include "core.h"

/* A JSON string of text that may not be UTF-8 (a path's bytes): as it is
 * when it is, else every byte outside ASCII written as \xNN. */
json_t *iok_json_text(const char *s);
struct iok_cores; /* cores.h */
/* environment: host names of all ranks (as gathered), nodes, ranks per
 * node, each node's cores (NULL: none gathered), Slurm ids, the MPI library. */
json_t *iok_env_json(const char *hosts, int nprocs, const struct iok_cores *cores);
/* hints: asked for, from which file, handed to the library or not, and the
 * environment variables the libraries read themselves. */
json_t *iok_hints_json(const struct iok_run *run);
/* A pass's hints in effect, or null when the backend cannot report them. */
json_t *iok_pass_hints_json(const struct iok_pass_result *p);
/* environment.mpiio_layer: the io component and the settings of
 * iok_mpiio_layer(), or null when the library tells none. */
json_t *iok_mpiio_layer_json(void);
/* An option's value as its type. */
json_t *iok_option_json(const struct iok_optset *set, const struct iok_option *o);

#endif
