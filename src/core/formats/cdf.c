/* SPDX-License-Identifier: BSD-3-Clause */
/* The header of a NetCDF classic file (CDF-1, CDF-2, CDF-5) walked with
 * plain reads before PnetCDF sees it: every count and length is bounded by
 * the bytes left in the file, so a damaged header cannot make the library
 * allocate what the file does not hold. Layout (NetCDF classic format spec):
 *   magic numrecs dim_list gatt_list var_list
 *   list  = ABSENT (0, 0) | tag nelems item...
 *   dim   = name length;   att = name type nelems values (padded to 4)
 *   var   = name ndims dimid... att_list type vsize begin
 * Integers are big-endian; counts, lengths, dimids and vsize take 8 bytes in
 * CDF-5 (4 otherwise), begin 8 bytes in CDF-2 and CDF-5. */
#include "cdf.h"

#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

#include "iokernels/error.h"

enum { TAG_DIM = 10, TAG_VAR = 11, TAG_ATT = 12 };

struct hdr {
    FILE *f;
    const char *path;
    int64_t size, pos, at; /* file size, bytes read so far, start of the last field */
    int ver, word;         /* 1, 2 or 5; bytes of a count (4 or 8) */
};

static int
damaged(struct hdr *h, const char *what, int64_t end)
{
    return iok_error(IOK_EUSAGE,
                     "%s: damaged NetCDF header: %s at byte %lld ends at byte %lld but the file "
                     "holds %lld bytes: the file is truncated or corrupt",
                     h->path, what, (long long)h->pos, (long long)end, (long long)h->size);
}

static int
bad(struct hdr *h, const char *what)
{
    return iok_error(IOK_EUSAGE,
                     "%s: damaged NetCDF header: %s at byte %lld: the file is truncated or "
                     "corrupt",
                     h->path, what, (long long)h->at);
}

/* Takes n bytes (into buf, or skipped when buf is NULL) if the file has them. */
static int
take(struct hdr *h, void *buf, int64_t n, const char *what)
{
    h->at = h->pos;
    if (n > h->size - h->pos)
        return damaged(h, what, h->pos + n);
    if (buf ? fread(buf, 1, (size_t)n, h->f) != (size_t)n : fseek(h->f, (long)n, SEEK_CUR) != 0)
        return iok_error(IOK_EIO, "%s: read error in the NetCDF header at byte %lld", h->path,
                         (long long)h->pos);
    h->pos += n;
    return IOK_OK;
}

/* A big-endian unsigned integer of bytes (4 or 8) bytes. */
static int
uint_be(struct hdr *h, int bytes, uint64_t *v, const char *what)
{
    unsigned char b[8];
    IOK_TRY(take(h, b, bytes, what));
    *v = 0;
    for (int i = 0; i < bytes; i++)
        *v = *v << 8 | b[i];
    return IOK_OK;
}

/* A count of items of at least each bytes apiece, all of them in the file. */
static int
count(struct hdr *h, int64_t each, int64_t *n, const char *what)
{
    uint64_t v;
    IOK_TRY(uint_be(h, h->word, &v, what));
    if (v > (uint64_t)(h->size - h->pos) / (uint64_t)each) {
        char why[128];
        snprintf(why, sizeof why, "%s %llu (more than the %lld bytes left can hold)", what,
                 (unsigned long long)v, (long long)(h->size - h->pos));
        return bad(h, why);
    }
    *n = (int64_t)v;
    return IOK_OK;
}

static int64_t
pad4(int64_t n)
{
    return (n + 3) / 4 * 4;
}

/* A name: its length, then its bytes padded to 4. */
static int
name(struct hdr *h, const char *what)
{
    int64_t len;
    IOK_TRY(count(h, 1, &len, what));
    return take(h, NULL, pad4(len), what);
}

/* A list's tag and item count: 0 items when ABSENT (tag 0, count 0). */
static int
list(struct hdr *h, uint64_t tag, int64_t each, int64_t *n, const char *what)
{
    uint64_t t;
    IOK_TRY(uint_be(h, 4, &t, what));
    IOK_TRY(count(h, each, n, what));
    if (t != tag && !(t == 0 && *n == 0)) {
        char why[96];
        snprintf(why, sizeof why, "%s has tag %llu (expected %llu, or 0 when empty)", what,
                 (unsigned long long)t, (unsigned long long)tag);
        return bad(h, why);
    }
    return IOK_OK;
}

static int
atts(struct hdr *h, const char *what)
{
    static const int esize[] = {0, 1, 1, 2, 4, 4, 8, 1, 2, 4, 8, 8};
    int64_t n, w = h->word;
    IOK_TRY(list(h, TAG_ATT, 2 * w + 4, &n, what));
    for (int64_t i = 0; i < n; i++) {
        uint64_t type;
        int64_t nelems;
        IOK_TRY(name(h, "an attribute's name length"));
        IOK_TRY(uint_be(h, 4, &type, "an attribute's type"));
        if (type < 1 || type > (h->ver == 5 ? 11u : 6u)) {
            char why[64];
            snprintf(why, sizeof why, "attribute type %llu", (unsigned long long)type);
            return bad(h, why);
        }
        IOK_TRY(count(h, esize[type], &nelems, "an attribute's value count"));
        IOK_TRY(take(h, NULL, pad4(nelems * esize[type]), "an attribute's values"));
    }
    return IOK_OK;
}

int
iok_cdf_version(const unsigned char *b, int64_t n)
{
    return n >= 4 && b[0] == 'C' && b[1] == 'D' && b[2] == 'F' &&
                   (b[3] == 1 || b[3] == 2 || b[3] == 5)
               ? b[3]
               : 0;
}

int
iok_cdf_header_check(const char *path)
{
    return iok_cdf_header_walk(path, NULL);
}

/* The least bytes a file whose header is this one must hold: up to where
 * the last block of data begins, by the header's offsets and sizes (the
 * last fixed-size variable's begin, or the last record's last variable's).
 * Not up to where it ends: a writer without fill leaves the tail of the
 * last variable unwritten when it writes none there (E3SM's --missing skip
 * does), and the format allows it; a file cut before the last block (a
 * record or more, a whole variable) is truncated. A lone record variable's
 * records are not padded: its size less 3 stands for it. -1 when a size is
 * unknown (a CDF-1/2 vsize of 2^32 - 1 stands for a larger one). */
struct data_end {
    int64_t fixed, last_rec_begin, recsize, nrec, unknown;
};

static void
data_end_add(struct data_end *e, int rec, uint64_t vsize, uint64_t begin, int word)
{
    if ((word == 4 && vsize == 0xffffffffu) || vsize > INT64_MAX / 4 || begin > INT64_MAX / 4) {
        e->unknown = 1;
        return;
    }
    if (!rec) {
        if (vsize > 0 && (int64_t)begin > e->fixed)
            e->fixed = (int64_t)begin;
        return;
    }
    e->recsize += (int64_t)vsize;
    e->nrec++;
    if ((int64_t)begin >= e->last_rec_begin)
        e->last_rec_begin = (int64_t)begin;
}

static int64_t
data_end_of(const struct data_end *e, uint64_t numrecs)
{
    if (e->unknown || numrecs > INT64_MAX / 4)
        return -1;
    int64_t end = e->fixed;
    if (e->nrec && numrecs) {
        int64_t rs = e->nrec == 1 ? e->recsize - 3 : e->recsize;
        if (rs > 0 && (int64_t)(numrecs - 1) > (INT64_MAX / 4) / rs)
            return -1;
        int64_t r = e->last_rec_begin + (int64_t)(numrecs - 1) * rs;
        if (r > end)
            end = r;
    }
    return end;
}

int
iok_cdf_header_walk(const char *path, int64_t *data_end)
{
    struct hdr h = {.path = path};
    struct data_end de = {0};
    int64_t rec_dim = -1;
    if (data_end)
        *data_end = -1;
    struct stat st;
    h.f = fopen(path, "rb");
    if (!h.f || fstat(fileno(h.f), &st) != 0) {
        if (h.f)
            fclose(h.f);
        return iok_error(IOK_EUSAGE, "cannot open %s: check the path", path);
    }
    h.size = (int64_t)st.st_size;
    unsigned char magic[4];
    int rc = take(&h, magic, 4, "the signature");
    if (rc == IOK_OK && !iok_cdf_version(magic, 4))
        rc = iok_error(IOK_EUSAGE, "%s: not a NetCDF classic file (no CDF-1/2/5 signature)", path);
    h.ver = magic[3];
    h.word = h.ver == 5 ? 8 : 4;
    int64_t w = h.word, ndims = 0, nvars = 0, vdims;
    uint64_t numrecs = 0, u;
    if (rc == IOK_OK)
        rc = uint_be(&h, h.word, &numrecs, "the record count");
    if (rc == IOK_OK)
        rc = list(&h, TAG_DIM, 2 * w, &ndims, "the dimension count");
    for (int64_t i = 0; rc == IOK_OK && i < ndims; i++) {
        rc = name(&h, "a dimension's name length");
        if (rc == IOK_OK)
            rc = uint_be(&h, h.word, &u, "a dimension's length");
        if (rc == IOK_OK && u > INT64_MAX)
            rc = bad(&h, "a dimension's length beyond 2^63");
        if (rc == IOK_OK && u == 0 && rec_dim < 0)
            rec_dim = i;
    }
    if (rc == IOK_OK)
        rc = atts(&h, "the global attribute count");
    /* a variable: name, ndims, an empty attribute list, type, vsize, begin */
    if (rc == IOK_OK)
        rc = list(&h, TAG_VAR, 3 * w + 4 + 4 + w + (h.ver == 1 ? 4 : 8), &nvars,
                  "the variable count");
    for (int64_t i = 0; rc == IOK_OK && i < nvars; i++) {
        int is_rec = 0;
        rc = name(&h, "a variable's name length");
        if (rc == IOK_OK)
            rc = count(&h, w, &vdims, "a variable's dimension count");
        for (int64_t k = 0; rc == IOK_OK && k < vdims; k++) {
            rc = uint_be(&h, h.word, &u, "a variable's dimension id");
            if (rc == IOK_OK && k == 0 && rec_dim >= 0 && u == (uint64_t)rec_dim)
                is_rec = 1;
            if (rc == IOK_OK && u >= (uint64_t)ndims) {
                char why[96];
                snprintf(why, sizeof why, "dimension id %llu of %lld dimensions",
                         (unsigned long long)u, (long long)ndims);
                rc = bad(&h, why);
            }
        }
        if (rc == IOK_OK)
            rc = atts(&h, "a variable's attribute count");
        if (rc == IOK_OK)
            rc = uint_be(&h, 4, &u, "a variable's type");
        if (rc == IOK_OK && (u < 1 || u > (h.ver == 5 ? 11u : 6u))) {
            char why[64];
            snprintf(why, sizeof why, "variable type %llu", (unsigned long long)u);
            rc = bad(&h, why);
        }
        uint64_t vsize = 0, begin = 0;
        if (rc == IOK_OK)
            rc = uint_be(&h, h.word, &vsize, "a variable's size");
        if (rc == IOK_OK)
            rc = uint_be(&h, h.ver == 1 ? 4 : 8, &begin, "a variable's offset");
        if (rc == IOK_OK)
            data_end_add(&de, is_rec, vsize, begin, h.word);
    }
    fclose(h.f);
    int streaming = numrecs == (h.word == 4 ? 0xffffffffu : UINT64_MAX); /* count unknown */
    if (rc == IOK_OK && data_end && !streaming)
        *data_end = data_end_of(&de, numrecs);
    return rc;
}
