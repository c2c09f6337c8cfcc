/* SPDX-License-Identifier: BSD-3-Clause */
/* What a kernel writes: dimensions, variables and attributes of one file.
 *
 * A schema is a pure description, built by a kernel and executed by a
 * backend. Dimensions are defined in the order they are added (NetCDF headers
 * depend on it), variables likewise, attributes in the order added per owner.
 * A record (unlimited) dimension carries in `len` the number of records the
 * run will write, so that backends without an unlimited notion (raw MPI-IO,
 * HDF5 without extension) can size the variable up front. */
#ifndef IOKERNELS_SCHEMA_H
#define IOKERNELS_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

#define IOK_MAX_DIMS 8
#define IOK_GLOBAL (-1)         /* attribute owner: the file itself */
#define IOK_GROUP(g) (-2 - (g)) /* attribute owner: group g */

enum iok_type { IOK_CHAR, IOK_BYTE, IOK_SHORT, IOK_INT, IOK_INT64, IOK_FLOAT, IOK_DOUBLE };

size_t iok_type_size(enum iok_type t);
const char *iok_type_name(enum iok_type t);

struct iok_dim {
    char *name;
    int64_t len;   /* for the record dimension: records this run holds */
    int unlimited; /* 1 for the record dimension */
};

struct iok_attr {
    int owner; /* variable id, IOK_GLOBAL, or IOK_GROUP(g) */
    char *name;
    enum iok_type type;
    size_t len; /* number of elements (characters for IOK_CHAR) */
    void *value;
    int compound; /* -1, or the compound type of its values (len / nfields of them) */
};

struct iok_var {
    char *name;
    enum iok_type type;
    int ndims;
    int dimids[IOK_MAX_DIMS];
    int64_t chunk[IOK_MAX_DIMS]; /* chunk hint for chunking backends; 0 = none */
    int fill;                    /* 1: pre-fill with the type's default fill value; 0: no hint */
    int deflate;                 /* deflate level 1-9 for compressing backends; 0: none */
    int shuffle;                 /* 1: byte shuffle before deflate (only with deflate) */
    uint64_t name_hash;          /* identity of the variable in the data function */
    int compound;                /* -1, or the compound type of its last dimension */
};

/* Groups and compound types: for backends with IOK_CAP_GROUPS and
 * IOK_CAP_COMPOUND (HDF5). A kernel uses them only when the backend has the
 * capability; the others never see any.
 *
 * A group is a path from the root without a leading '/', its parent listed
 * before it ("level_0", then "level_0/data_attributes"). A variable lives in
 * a group when its name is a path ("level_0/boxes"); an attribute's owner may
 * be IOK_GROUP(g).
 *
 * A compound type is nfields named fields of one base type. A variable whose
 * last dimension has nfields elements may be stored as compound values, one
 * per element of the other dimensions: requests, data and checks still see
 * the plain array (the last dimension's subarray must then be whole). An
 * attribute of len values may be stored as len / nfields compound values. */
struct iok_group {
    char *path;
};

struct iok_compound {
    enum iok_type base;
    int nfields;
    char **fields;
};

struct iok_schema {
    int ndims, nvars, nattrs;
    struct iok_dim *dims;
    struct iok_var *vars;
    struct iok_attr *attrs;
    int cap_dims, cap_vars, cap_attrs;
    int ngroups, ncompounds;
    struct iok_group *groups;
    struct iok_compound *compounds;
    int cap_groups, cap_compounds;
    /* 1: a backend that distinguishes them (HDF5) stores an attribute of one
     * value (or one compound value) as a scalar, not as an array of one. */
    int scalar_attrs;
};

void iok_schema_init(struct iok_schema *s);
void iok_schema_free(struct iok_schema *s);

/* Each returns the new id (>= 0) or a negative value on bad arguments. */
int iok_schema_add_dim(struct iok_schema *s, const char *name, int64_t len, int unlimited);
int iok_schema_add_var(struct iok_schema *s, const char *name, enum iok_type type, int ndims,
                       const int *dimids);
int iok_schema_add_attr(struct iok_schema *s, int owner, const char *name, enum iok_type type,
                        size_t len, const void *value);
int iok_schema_add_text_attr(struct iok_schema *s, int owner, const char *name, const char *text);

int iok_schema_find_var(const struct iok_schema *s, const char *name);

/* Groups and compound types (see above). Each returns the new id (>= 0) or a
 * negative value on bad arguments: a group whose parent is not listed, a
 * compound that does not match the variable's last dimension or type. */
int iok_schema_add_group(struct iok_schema *s, const char *path);
int iok_schema_add_compound(struct iok_schema *s, enum iok_type base, int nfields,
                            const char *const *fields);
int iok_schema_set_var_compound(struct iok_schema *s, int v, int compound);
int iok_schema_set_attr_compound(struct iok_schema *s, int a, int compound);
/* The group of an attribute owner, or -1 when it is the file or a variable. */
int iok_attr_group(int owner);

/* Extent of dimension k of variable v, number of elements of one record (or
 * of the whole variable when it is not a record variable), whole size. */
int64_t iok_var_dim_len(const struct iok_schema *s, int v, int k);
int iok_var_is_record(const struct iok_schema *s, int v);
int64_t iok_var_record_elems(const struct iok_schema *s, int v);
int64_t iok_var_total_elems(const struct iok_schema *s, int v);

/* Checks of a file against the schema, for backends' open: each returns
 * IOK_OK or IOK_EUSAGE with one line naming the file, the variable or
 * dimension, the size found and the size expected. A dimension's length
 * must equal the schema's, a record dimension's at least the records the
 * run reads. iok_check_var_type always fails: call it on a type mismatch,
 * with the file's type as text. */
int iok_check_var_rank(const char *path, const struct iok_schema *s, int v, int found);
int iok_check_var_dim(const char *path, const struct iok_schema *s, int v, int k, int64_t found);
int iok_check_var_type(const char *path, const struct iok_schema *s, int v, const char *found);
/* A raw file (no header) of found bytes whose layout needs needed bytes. */
int iok_check_file_size(const char *path, int64_t found, int64_t needed);

#endif
