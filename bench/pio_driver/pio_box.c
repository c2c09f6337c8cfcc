/* SPDX-License-Identifier: BSD-3-Clause */
/* bench/pio's driver: one E3SM history file written through NCAR's PIO
 * with its box rearranger and the PnetCDF iotype. Not part of the suite's
 * build: bench/pio compiles it against the PIO prefix it is given.
 *
 *   pio_box MAP VARIABLES_TSV IOTASKS STRIDE TEMPLATE CASE OUT [TEMPLATE CASE OUT]...
 *
 * MAP: the E3SM-IO decomposition file (data/e3sm/map_*_case_16p.nc): each
 * rank takes the decomposition ranks iokernels e3sm gives it (contiguous
 * blocks, e3sm_assign), every pair (the gap fillers too, the suite's
 * default --missing fill), as PIO's 1-based compmap.
 * TEMPLATE: the file iokernels e3sm wrote for the same case (-k): its
 * dimensions, variables (names, types, shapes, attributes) and record
 * count are written again. VARIABLES_TSV/CASE (data/e3sm/variables.tsv,
 * e.g. G or F_h0): which decomposition each variable uses ('-': written
 * whole, as rank 0 does in the suite).
 * IOTASKS, STRIDE: PIOc_Init_Intracomm's (base 0). Each history file
 * (TEMPLATE CASE OUT) in turn, in one process, as iokernels e3sm writes
 * them; for each it prints "Max Time of TOTAL = X sec" (create to close,
 * max over ranks, as iokernels prints it) after the PIO box rearranger's
 * setup time (PIOc_InitDecomp of every decomposition and type the file
 * uses, untimed in TOTAL: E3SM sets its decompositions up once).
 * With IOK_PIO_WRITEMAP=DIR it also writes each decomposition, as this run's
 * ranks hold it, in PIO's text format (DIR/D1.dat, ...: PIOc_writemap, the
 * dimensions fastest first as E3SM's Fortran writes them). */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <pio.h>
#include <pnetcdf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXD 8
#define CHECK(x)                                                                                   \
    do {                                                                                           \
        int e_ = (x);                                                                              \
        if (e_) {                                                                                  \
            fprintf(stderr, "pio_box: %s failed (%d) at line %d\n", #x, e_, __LINE__);             \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

struct decomp {
    int ndims, gdims[4];
    int64_t total, maplen;
    PIO_Offset *map;
    int ioid[NC_MAX_ATOMIC_TYPE + 1]; /* per memory type, 0 = none yet */
};

static void
assign(int64_t n, int nprocs, int rank, int64_t *first, int64_t *count)
{
    int64_t q = n / nprocs, r = n % nprocs;
    *count = q + (rank < r ? 1 : 0);
    *first = (int64_t)rank * q + (rank < r ? rank : r);
}

static int64_t *
read_ints(int nc, const char *name, int64_t start, int64_t count)
{
    int varid;
    long long *v = malloc((size_t)(count + 1) * sizeof *v);
    MPI_Offset st = start, ct = count;
    CHECK(ncmpi_inq_varid(nc, name, &varid));
    CHECK(ncmpi_get_vara_longlong_all(nc, varid, &st, &ct, v));
    return (int64_t *)v;
}

/* This rank's share of decomposition id: its 1-based compmap. */
static void
read_decomp(int nc, int id, int rank, int nprocs, struct decomp *d)
{
    char name[64];
    int varid, dimid;
    MPI_Offset n, noff;
    memset(d, 0, sizeof *d);
    snprintf(name, sizeof name, "D%d.nreqs", id);
    CHECK(ncmpi_inq_varid(nc, name, &varid));
    CHECK(ncmpi_inq_vardimid(nc, varid, &dimid));
    CHECK(ncmpi_inq_dimlen(nc, dimid, &n));
    long long dims[4];
    MPI_Offset nd;
    snprintf(name, sizeof name, "D%d.dims", id);
    CHECK(ncmpi_inq_attlen(nc, NC_GLOBAL, name, &nd));
    CHECK(ncmpi_get_att_longlong(nc, NC_GLOBAL, name, dims));
    d->ndims = (int)nd;
    d->total = 1;
    for (int k = 0; k < d->ndims; k++) {
        d->gdims[k] = (int)dims[k];
        d->total *= dims[k];
    }
    snprintf(name, sizeof name, "D%d.nreqs", id);
    int64_t *nreqs = read_ints(nc, name, 0, n);
    int64_t first, count, start = 0, cnt = 0;
    assign(n, nprocs, rank, &first, &count);
    for (int64_t i = 0; i < n; i++) {
        if (i < first)
            start += nreqs[i];
        else if (i < first + count)
            cnt += nreqs[i];
    }
    snprintf(name, sizeof name, "D%d.offsets", id);
    CHECK(ncmpi_inq_varid(nc, name, &varid));
    CHECK(ncmpi_inq_vardimid(nc, varid, &dimid));
    CHECK(ncmpi_inq_dimlen(nc, dimid, &noff));
    int64_t *off = read_ints(nc, name, start, cnt);
    snprintf(name, sizeof name, "D%d.lengths", id);
    int64_t *len = read_ints(nc, name, start, cnt);
    for (int64_t j = 0; j < cnt; j++)
        d->maplen += len[j];
    d->map = malloc((size_t)(d->maplen + 1) * sizeof *d->map);
    int64_t at = 0;
    for (int64_t j = 0; j < cnt; j++)
        for (int64_t k = 0; k < len[j]; k++)
            d->map[at++] = off[j] + k + 1;
    free(nreqs);
    free(off);
    free(len);
}

/* The decomposition (1..) of a variable of this case, 0 if written whole. */
static int
var_decomp(const char *tsv, const char *cas, const char *var)
{
    FILE *f = fopen(tsv, "r");
    char line[1024];
    int id = -1;
    if (!f) {
        perror(tsv);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    while (id < 0 && fgets(line, sizeof line, f)) {
        char *col[7], *save = NULL;
        int n = 0;
        if (line[0] == '#')
            continue;
        for (char *t = strtok_r(line, "\t\n", &save); t && n < 7; t = strtok_r(NULL, "\t\n", &save))
            col[n++] = t;
        if (n == 7 && !strcmp(col[0], cas) && !strcmp(col[2], var))
            id = col[5][0] == 'D' ? atoi(col[5] + 1) : 0;
    }
    fclose(f);
    if (id < 0) {
        fprintf(stderr, "pio_box: %s is not a variable of case %s in %s\n", var, cas, tsv);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return id;
}

static size_t
type_size(nc_type t)
{
    switch (t) {
    case NC_BYTE:
    case NC_CHAR:
    case NC_UBYTE:
        return 1;
    case NC_SHORT:
    case NC_USHORT:
        return 2;
    case NC_INT:
    case NC_UINT:
    case NC_FLOAT:
        return 4;
    default:
        return 8;
    }
}

static void
copy_atts(int tnc, int tvar, int ncid, int varid)
{
    int natts;
    CHECK(ncmpi_inq_varnatts(tnc, tvar, &natts));
    for (int a = 0; a < natts; a++) {
        char name[NC_MAX_NAME + 1];
        nc_type t;
        MPI_Offset len;
        CHECK(ncmpi_inq_attname(tnc, tvar, a, name));
        CHECK(ncmpi_inq_att(tnc, tvar, name, &t, &len));
        void *buf = malloc((size_t)len * type_size(t) + 1);
        CHECK(ncmpi_get_att(tnc, tvar, name, buf));
        CHECK(PIOc_put_att(ncid, varid, name, t, len, buf));
        free(buf);
    }
}

/* One history file: the template's header, every variable's records. */
static void
write_file(int iosysid, struct decomp *dec, int nd, const char *tmpl, const char *tsv,
           const char *cas, const char *out)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    /* the template's header */
    int tnc, ndims, nvars, unlim;
    CHECK(ncmpi_open(MPI_COMM_WORLD, tmpl, NC_NOWRITE, MPI_INFO_NULL, &tnc));
    CHECK(ncmpi_inq(tnc, &ndims, &nvars, NULL, &unlim));
    MPI_Offset nrec = 0;
    if (unlim >= 0)
        CHECK(ncmpi_inq_dimlen(tnc, unlim, &nrec));
    int *vdec = malloc((size_t)nvars * sizeof *vdec), *vid = malloc((size_t)nvars * sizeof *vid);
    nc_type *vtype = malloc((size_t)nvars * sizeof *vtype);
    for (int v = 0; v < nvars; v++) {
        char name[NC_MAX_NAME + 1];
        CHECK(ncmpi_inq_varname(tnc, v, name));
        CHECK(ncmpi_inq_vartype(tnc, v, &vtype[v]));
        vdec[v] = var_decomp(tsv, cas, name);
    }

    /* PIO decompositions per (decomposition, type) the case uses: set up
     * once, outside the timed span, as E3SM does at initialisation */
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int v = 0; v < nvars; v++) {
        struct decomp *d = &dec[vdec[v]];
        if (vdec[v] && vdec[v] <= nd && !d->ioid[vtype[v]])
            CHECK(PIOc_InitDecomp(iosysid, vtype[v], d->ndims, d->gdims, (int)d->maplen, d->map,
                                  &d->ioid[vtype[v]], NULL, NULL, NULL));
    }
    double tsetup = MPI_Wtime() - t0, tmax;
    MPI_Reduce(&tsetup, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("PIO box rearranger setup (PIOc_InitDecomp) = %.4f sec\n", tmax);

    size_t bufmax = 1;
    for (int id = 1; id <= nd; id++)
        if ((size_t)dec[id].maplen > bufmax)
            bufmax = (size_t)dec[id].maplen;
    MPI_Offset whole = 1; /* the largest variable written whole, elements */
    for (int v = 0; v < nvars; v++) {
        int vd, dimids[NC_MAX_VAR_DIMS];
        MPI_Offset n = 1, len;
        CHECK(ncmpi_inq_varndims(tnc, v, &vd));
        CHECK(ncmpi_inq_vardimid(tnc, v, dimids));
        for (int k = 0; k < vd; k++)
            if (dimids[k] != unlim) {
                CHECK(ncmpi_inq_dimlen(tnc, dimids[k], &len));
                n *= len;
            }
        if (!vdec[v] && n > whole)
            whole = n;
    }
    if ((size_t)whole > bufmax)
        bufmax = (size_t)whole;
    double *buf = malloc(bufmax * 8);
    for (size_t i = 0; i < bufmax; i++)
        buf[i] = rank + i * 1e-6;
    char *cbuf = calloc(bufmax, 8);
    memset(cbuf, 'x', bufmax);

    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    int ncid, iotype = PIO_IOTYPE_PNETCDF;
    CHECK(PIOc_createfile(iosysid, &ncid, &iotype, out, PIO_CLOBBER | PIO_64BIT_DATA));
    int *fdim = malloc((size_t)ndims * sizeof *fdim);
    for (int k = 0; k < ndims; k++) {
        char name[NC_MAX_NAME + 1];
        MPI_Offset len;
        CHECK(ncmpi_inq_dim(tnc, k, name, &len));
        CHECK(PIOc_def_dim(ncid, name, k == unlim ? PIO_UNLIMITED : len, &fdim[k]));
    }
    copy_atts(tnc, NC_GLOBAL, ncid, PIO_GLOBAL);
    for (int v = 0; v < nvars; v++) {
        char name[NC_MAX_NAME + 1];
        int vd, dimids[NC_MAX_VAR_DIMS];
        CHECK(ncmpi_inq_varname(tnc, v, name));
        CHECK(ncmpi_inq_varndims(tnc, v, &vd));
        CHECK(ncmpi_inq_vardimid(tnc, v, dimids));
        for (int k = 0; k < vd; k++)
            dimids[k] = fdim[dimids[k]];
        CHECK(PIOc_def_var(ncid, name, vtype[v], vd, dimids, &vid[v]));
        copy_atts(tnc, v, ncid, vid[v]);
    }
    CHECK(PIOc_enddef(ncid));
    double t_def = MPI_Wtime();
    for (MPI_Offset r = 0; r < (nrec ? nrec : 1); r++)
        for (int v = 0; v < nvars; v++) {
            int vd, dimids[NC_MAX_VAR_DIMS];
            CHECK(ncmpi_inq_varndims(tnc, v, &vd));
            CHECK(ncmpi_inq_vardimid(tnc, v, dimids));
            int isrec = vd > 0 && dimids[0] == unlim;
            if (r > 0 && !isrec)
                continue;
            if (vdec[v]) {
                struct decomp *d = &dec[vdec[v]];
                if (isrec)
                    CHECK(PIOc_setframe(ncid, vid[v], (int)r));
                CHECK(PIOc_write_darray(ncid, vid[v], d->ioid[vtype[v]], d->maplen,
                                        vtype[v] == NC_CHAR ? (void *)cbuf : (void *)buf, NULL));
                continue;
            }
            PIO_Offset st[NC_MAX_VAR_DIMS], ct[NC_MAX_VAR_DIMS];
            for (int k = 0; k < vd; k++) {
                MPI_Offset len;
                CHECK(ncmpi_inq_dimlen(tnc, dimids[k], &len));
                st[k] = isrec && k == 0 ? r : 0;
                ct[k] = isrec && k == 0 ? 1 : len;
            }
            CHECK(PIOc_put_vara(ncid, vid[v], st, ct,
                                vtype[v] == NC_CHAR ? (void *)cbuf : (void *)buf));
        }
    double t_wr = MPI_Wtime();
    CHECK(PIOc_closefile(ncid));
    double t_end = MPI_Wtime();
    double ph[4] = {t_def - t0, t_wr - t_def, t_end - t_wr, t_end - t0}, phmax[4];
    MPI_Reduce(ph, phmax, 4, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("PIO phases, max over ranks: create+define %.4f write_darray/put_vara %.4f "
               "close (flush) %.4f sec\n",
               phmax[0], phmax[1], phmax[2]);
        printf("Max Time of TOTAL = %.4f sec\n", phmax[3]);
    }
    CHECK(ncmpi_close(tnc));
    free(buf);
    free(cbuf);
    free(fdim);
    free(vdec);
    free(vid);
    free(vtype);
}

int
main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 5 || (argc - 5) % 3) {
        if (rank == 0)
            fprintf(stderr, "usage: pio_box MAP VARIABLES_TSV IOTASKS STRIDE TEMPLATE CASE OUT "
                            "[TEMPLATE CASE OUT]...\n");
        MPI_Finalize();
        return 2;
    }
    const char *mapf = argv[1], *tsv = argv[2];
    int niotasks = atoi(argv[3]), stride = atoi(argv[4]), iosysid;
    CHECK(PIOc_Init_Intracomm(MPI_COMM_WORLD, niotasks, stride, 0, PIO_REARR_BOX, &iosysid));

    /* the decompositions: this rank's share, as iokernels e3sm reads it */
    int mnc, nd = 0;
    struct decomp dec[MAXD + 1];
    CHECK(ncmpi_open(MPI_COMM_WORLD, mapf, NC_NOWRITE, MPI_INFO_NULL, &mnc));
    for (int id = 1; id <= MAXD; id++) {
        char name[64];
        int v;
        snprintf(name, sizeof name, "D%d.nreqs", id);
        if (ncmpi_inq_varid(mnc, name, &v) != NC_NOERR)
            break;
        read_decomp(mnc, id, rank, nprocs, &dec[id]);
        nd = id;
    }
    CHECK(ncmpi_close(mnc));
    /* $IOK_PIO_WRITEMAP=DIR: each decomposition as PIO's own text file,
     * DIR/Dn.dat (PIOc_writemap: the compmap of every rank, 1-based) */
    const char *dump = getenv("IOK_PIO_WRITEMAP");
    for (int id = 1; dump && id <= nd; id++) {
        char path[4096];
        int fdims[4]; /* E3SM's files come from Fortran: fastest dimension first */
        for (int k = 0; k < dec[id].ndims; k++)
            fdims[k] = dec[id].gdims[dec[id].ndims - 1 - k];
        snprintf(path, sizeof path, "%s/D%d.dat", dump, id);
        CHECK(
            PIOc_writemap(path, dec[id].ndims, fdims, dec[id].maplen, dec[id].map, MPI_COMM_WORLD));
    }

    for (int f = 5; f + 2 < argc; f += 3)
        write_file(iosysid, dec, nd, argv[f], tsv, argv[f + 1], argv[f + 2]);
    for (int id = 1; id <= nd; id++) {
        for (int t2 = 0; t2 <= NC_MAX_ATOMIC_TYPE; t2++)
            if (dec[id].ioid[t2])
                PIOc_freedecomp(iosysid, dec[id].ioid[t2]);
        free(dec[id].map);
    }
    PIOc_free_iosystem(iosysid);
    MPI_Finalize();
    return 0;
}
