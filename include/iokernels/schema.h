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
#define IOK_GLOBAL (-1) /* attribute owner: the file itself */

enum iok_type { IOK_CHAR, IOK_BYTE, IOK_SHORT, IOK_INT, IOK_INT64, IOK_FLOAT, IOK_DOUBLE };

size_t iok_type_size(enum iok_type t);
const char *iok_type_name(enum iok_type t);

struct iok_dim {
    char *name;
    int64_t len;   /* for the record dimension: records this run holds */
    int unlimited; /* 1 for the record dimension */
};

struct iok_attr {
    int owner; /* variable id, or IOK_GLOBAL */
    char *name;
    enum iok_type type;
    size_t len; /* number of elements (characters for IOK_CHAR) */
    void *value;
};

struct iok_var {
    char *name;
    enum iok_type type;
    int ndims;
    int dimids[IOK_MAX_DIMS];
    int64_t chunk[IOK_MAX_DIMS]; /* chunk hint for chunking backends; 0 = none */
    int fill;                    /* 1: pre-fill with the type's default fill value; 0: no hint */
    int deflate;                 /* deflate level 1-9 for compressing backends; 0: none */
    uint64_t name_hash;          /* identity of the variable in the data function */
};

struct iok_schema {
    int ndims, nvars, nattrs;
    struct iok_dim *dims;
    struct iok_var *vars;
    struct iok_attr *attrs;
    int cap_dims, cap_vars, cap_attrs;
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

/* Extent of dimension k of variable v, number of elements of one record (or
 * of the whole variable when it is not a record variable), whole size. */
int64_t iok_var_dim_len(const struct iok_schema *s, int v, int k);
int iok_var_is_record(const struct iok_schema *s, int v);
int64_t iok_var_record_elems(const struct iok_schema *s, int v);
int64_t iok_var_total_elems(const struct iok_schema *s, int v);

#endif
