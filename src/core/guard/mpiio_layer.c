/* SPDX-License-Identifier: BSD-3-Clause */
/* Which MPI-IO implementation the run's MPI library uses. An MPICH-derived
 * library (MPICH, Cray MPICH, MVAPICH) has one, ROMIO, which reads the
 * hints file named by ROMIO_HINTS. OpenMPI picks an
 * "io" component (OMPIO or ROMIO) and, inside OMPIO, a collective algorithm
 * ("fcoll"), a file system driver ("fs"), a byte transfer layer ("fbtl") and
 * a shared file pointer one ("sharedfp"), none of which a hint changes and
 * none of which MPI_File_get_info shows. It matters: E3SM F canonical at 16
 * ranks here writes in 13.4 s under OMPIO's default fcoll (80% of it sorting
 * the aggregators' offsets), 0.5 s with fcoll two_phase, 1.0 s under ROMIO.
 *
 * The settings are read where OpenMPI reads them: OMPI_MCA_<name> variables
 * (also how mpiexec --mca reaches the ranks), over the parameter files
 * (OMPI_MCA_mca_base_param_files, else ~/.openmpi/mca-params.conf over
 * <sysconfdir>/openmpi-mca-params.conf). Not through MPI_T, the library's
 * own answer: OpenMPI 4.1's MPI_T_init_thread opens every framework, 0.21 s
 * and 3 MiB of peak memory per process, 0.45 MiB of it kept to the end.
 * The io component is one of those the process has loaded (its
 * mca_io_<name>.so mapped), the allowed one of highest priority. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/guard/guard.h"
#include "core/lib/lib.h"
#include "iokernels/error.h"

#ifndef IOK_OMPI_SYSCONFDIR
#define IOK_OMPI_SYSCONFDIR "/etc/openmpi"
#endif

static const char *const frameworks[IOK_MPIIO_NSETTINGS] = {"io", "fcoll", "fbtl", "fs",
                                                            "sharedfp"};

/* `name`'s value in one parameter file ("name = value" lines, '#'
 * comments) into out; 1 when the file sets it. */
static int
file_param(const char *path, const char *name, char *out, size_t n)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char line[1024];
    int found = 0;
    while (fgets(line, sizeof line, f)) {
        char *hash = strchr(line, '#'), *eq = strchr(line, '=');
        if (hash)
            *hash = '\0';
        if (!eq || (hash && hash < eq))
            continue;
        *eq = '\0';
        if (strcmp(iok_trim(line), name))
            continue;
        snprintf(out, n, "%s", iok_trim(eq + 1));
        found = 1; /* the last line naming it wins within a file */
    }
    fclose(f);
    return found;
}

/* An MCA parameter's value as OpenMPI resolves it; "" when nothing sets it. */
static void
mca_param(const char *name, char *out, size_t n)
{
    char var[128];
    snprintf(var, sizeof var, "OMPI_MCA_%s", name);
    const char *env = getenv(var);
    out[0] = '\0';
    if (env) {
        snprintf(out, n, "%s", env);
        return;
    }
    char files[4096];
    const char *listed = getenv("OMPI_MCA_mca_base_param_files"), *home = getenv("HOME");
    if (listed)
        snprintf(files, sizeof files, "%s", listed);
    else
        snprintf(files, sizeof files, "%s/.openmpi/mca-params.conf:%s/openmpi-mca-params.conf",
                 home ? home : "", IOK_OMPI_SYSCONFDIR);
    /* the first file that sets it wins */
    char *save = NULL;
    for (char *p = strtok_r(files, ":", &save); p; p = strtok_r(NULL, ":", &save))
        if (file_param(p, name, out, n))
            return;
}

/* OpenMPI 4.1's OMPIO asks every shared-file-pointer ("sharedfp")
 * component whether it can serve each file it opens, though the suite never
 * uses a shared file pointer. The "lockedfile" component answers by writing
 * "<path>.locktest.<rank>" into a 256-byte array on the stack: a path of
 * about 245 characters or more aborts the process ("buffer overflow
 * detected", SIGABRT) inside MPI_File_open, with every library that opens
 * through MPI-IO. It also creates and locks that file beside the output on
 * every rank at every open. "individual" creates two more files per rank
 * beside the output (".data.<rank>", ".metadata.<rank>") when it is chosen.
 * Both are left out unless the user's own setting (the variable or a
 * parameter file) says otherwise: "sm" stays, as OMPIO refuses every open
 * when the framework has no component at all; it serves ranks on one node
 * and otherwise declines, which OMPIO accepts (no shared file pointer). */
static const char sharedfp_default[] = "^lockedfile,individual";

void
iok_mpiio_layer_defaults(void)
{
#ifdef OPEN_MPI
    char v[256];
    mca_param("sharedfp", v, sizeof v);
    if (!v[0])
        setenv("OMPI_MCA_sharedfp", sharedfp_default, 0);
#endif
}

/* OpenMPI 4.1's sharedfp component "sm" (the one the suite's default
 * keeps, and the library's own first choice on one node) takes the file's
 * name from opal_basename(), which answers "/" for a name of one character
 * without a folder ("n"): its semaphore "OMPIO_/" is refused by sem_open,
 * and every open of that file fails inside MPI_File_open (MPI_ERR_OTHER,
 * PnetCDF's "Unknown error in file operation", NetCDF's "Permission
 * denied"). The same file is named "./n" instead. */
void
iok_mpiio_name(char *path, size_t len)
{
#ifdef OPEN_MPI
    if (path[0] && path[0] != '/' && !path[1] && len > 3) {
        char c = path[0];
        snprintf(path, len, "./%c", c);
    }
#else
    (void)path, (void)len;
#endif
}

/* Whether component `c` is in the selection list `sel` (OpenMPI's syntax:
 * "a,b" allows only those, "^a,b" excludes them, "" allows all). */
static int
allowed(const char *sel, const char *c)
{
    int negate = sel[0] == '^', listed = 0;
    char *copy = strdup(sel + negate), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
        listed |= !strcmp(t, c);
    free(copy);
    return !*sel || (negate ? !listed : listed);
}

#ifdef OPEN_MPI
/* Component "sm" first checks that it can create
 * "<session dir>/<name>_cid--1-<rank>.sm" (declining without it, which
 * OMPIO accepts: a name of 244 characters or more opens, with "unable to
 * open file for mmap" lines of OpenMPI's own), then opens
 * "<name>_cid-<cid>-<pid>.sm" there and fails the open when it cannot: a
 * name of 237 to 243 characters passes the check and, with a pid of up to
 * 7 digits and a communicator id of up to 3, fails the open past NAME_MAX
 * (or ranks disagree on the check: "-<rank>" has more digits from rank 10
 * on). Refused whatever this run's pid happens to be. */
#define SM_NAME_OK 236
#define SM_NAME_DECLINED 244

static int
sm_name_check(const char *path, const char *sel, const char *what)
{
    const char *slash = strrchr(path, '/');
    size_t len = strlen(slash ? slash + 1 : path);
    if (len <= SM_NAME_OK || len >= SM_NAME_DECLINED || !allowed(sel, "sm"))
        return IOK_OK;
    return iok_error(IOK_EUSAGE,
                     "%s %s: its name is %zu characters, and OpenMPI's OMPIO component sharedfp "
                     "sm, which the sharedfp setting '%s' allows, fails to open a file whose name "
                     "has %d to %d (its own file takes the name and up to 19 characters more, "
                     "past NAME_MAX); shorten the name to %d characters or fewer",
                     what, path, len, sel[0] ? iok_quote(sel) : "(unset)", SM_NAME_OK + 1,
                     SM_NAME_DECLINED - 1, SM_NAME_OK);
}
#endif

int
iok_mpiio_path_check(const char *path, int nprocs, const char *what)
{
#ifdef OPEN_MPI
    char io[256], sel[256];
    mca_param("io", io, sizeof io);
    mca_param("sharedfp", sel, sizeof sel);
    if (!allowed(io, "ompio"))
        return IOK_OK;
    IOK_TRY(sm_name_check(path, sel, what));
    if (!allowed(sel, "lockedfile"))
        return IOK_OK;
    /* "<path>.locktest.<rank>" and its '\0' in 256 bytes, for the highest rank */
    int digits = snprintf(NULL, 0, "%d", nprocs > 1 ? nprocs - 1 : 0);
    size_t len = strlen(path), most = 256 - sizeof ".locktest." - (size_t)digits;
    if (len > most)
        return iok_error(IOK_EUSAGE,
                         "%s %s is %zu characters: OpenMPI's OMPIO component sharedfp lockedfile, "
                         "which the sharedfp setting '%s' allows, aborts the job on a path of "
                         "more than %zu at %d rank%s; shorten the path, or leave OMPI_MCA_sharedfp "
                         "unset (the suite excludes it: %s)",
                         what, path, len, iok_quote(sel), most, nprocs, nprocs == 1 ? "" : "s",
                         sharedfp_default);
#else
    (void)path, (void)nprocs, (void)what;
#endif
    return IOK_OK;
}

/* io_<c>_priority as set, else OpenMPI's default (ompio 30, ROMIO 10). */
static int
io_priority(const char *c)
{
    char name[160], v[64];
    snprintf(name, sizeof name, "io_%s_priority", c);
    mca_param(name, v, sizeof v);
    return v[0] ? atoi(v) : !strcmp(c, "ompio") ? 30 : 10;
}

/* The io component files are opened with: among those loaded, the allowed
 * one of highest priority; "" before any file was opened. */
static void
io_component(const char *sel, char *out, size_t n)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[1024];
    int best = -1;
    out[0] = '\0';
    while (maps && fgets(line, sizeof line, maps)) {
        const char *lib = strstr(line, "/mca_io_");
        if (!lib || !strstr(line, ".so"))
            continue;
        char comp[128];
        if (sscanf(lib, "/mca_io_%127[^.].so", comp) != 1 || !allowed(sel, comp))
            continue;
        int prio = io_priority(comp);
        if (prio > best) {
            best = prio;
            snprintf(out, n, "%s", comp);
        }
    }
    if (maps)
        fclose(maps);
}

/* The version that follows `key` in the library's string (its first word
 * after blanks, a leading 'v' and a trailing ',' dropped), or "". */
static void
version_after(const char *lib, const char *key, char *out, size_t n)
{
    const char *v = strstr(lib, key);
    out[0] = '\0';
    if (!v)
        return;
    v += strlen(key);
    v += strspn(v, " \t:");
    v += *v == 'v';
    snprintf(out, n, "%.*s", (int)strcspn(v, " \t\n,"), v);
}

int
iok_mpiio_layer(struct iok_mpiio_layer *l)
{
    memset(l, 0, sizeof *l);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING], v[32];
    int len;
    MPI_Get_library_version(lib, &len);
    if (strstr(lib, "MPICH")) { /* MPICH, Cray MPICH, MVAPICH: ROMIO only */
        version_after(lib, strstr(lib, "CRAY MPICH") ? "CRAY MPICH version" : "MPICH Version", v,
                      sizeof v);
        snprintf(l->mpi, sizeof l->mpi, "%s %s", strstr(lib, "CRAY") ? "Cray MPICH" : "MPICH", v);
        snprintf(l->io, sizeof l->io, "romio");
        /* the file of hints ROMIO reads for every file it opens */
        const char *hints = getenv("ROMIO_HINTS");
        l->nsettings = 1;
        snprintf(l->setting[0].framework, sizeof l->setting[0].framework, "ROMIO_HINTS");
        snprintf(l->setting[0].value, sizeof l->setting[0].value, "%s", hints ? hints : "");
        return 1;
    }
    if (!strstr(lib, "Open MPI"))
        return 0;
    version_after(lib, "Open MPI", v, sizeof v);
    snprintf(l->mpi, sizeof l->mpi, "Open MPI %s", v);
    l->nsettings = IOK_MPIIO_NSETTINGS;
    for (int i = 0; i < IOK_MPIIO_NSETTINGS; i++) {
        snprintf(l->setting[i].framework, sizeof l->setting[i].framework, "%s", frameworks[i]);
        mca_param(frameworks[i], l->setting[i].value, sizeof l->setting[i].value);
    }
    io_component(l->setting[0].value, l->io, sizeof l->io);
    return 1;
}

json_t *
iok_mpiio_layer_json(void)
{
    struct iok_mpiio_layer l;
    if (!iok_mpiio_layer(&l))
        return json_null();
    json_t *set = json_object();
    for (int i = 0; i < l.nsettings; i++)
        json_object_set_new(set, l.setting[i].framework, json_string(l.setting[i].value));
    return json_pack("{s:s, s:s?, s:o}", "mpi", l.mpi, "io_component", l.io[0] ? l.io : NULL,
                     "settings", set);
}

void
iok_mpiio_layer_report(FILE *out)
{
    struct iok_mpiio_layer l;
    if (!iok_mpiio_layer(&l))
        return;
    if (!strcmp(l.io, "romio") && !strcmp(l.setting[0].framework, "ROMIO_HINTS")) {
        fprintf(out, "MPI-IO layer             : %s ROMIO", l.mpi);
        if (l.setting[0].value[0])
            fprintf(out, ", ROMIO_HINTS %s", l.setting[0].value);
        fputc('\n', out);
        return;
    }
    fprintf(out, "MPI-IO layer             : OpenMPI io %s", l.io[0] ? l.io : "(none loaded)");
    int deflt = 0, ompio = !strcmp(l.io, "ompio"); /* the others are OMPIO's parts */
    for (int i = 0; i < IOK_MPIIO_NSETTINGS && ompio; i++)
        if (strcmp(l.setting[i].framework, "io") && l.setting[i].value[0])
            fprintf(out, ", %s %s", l.setting[i].framework, l.setting[i].value);
    for (int i = 0; i < IOK_MPIIO_NSETTINGS && ompio; i++)
        if (strcmp(l.setting[i].framework, "io") && !l.setting[i].value[0])
            fprintf(out, "%s%s", deflt++ ? ", " : "; ", l.setting[i].framework);
    if (deflt)
        fprintf(out, ": the library's choice");
    fputc('\n', out);
}
