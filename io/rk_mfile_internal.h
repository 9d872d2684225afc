/* rk_mfile_internal.h — what the writer (rk_mfile.c) and the reader
 * (rk_mfile_read.c) of model files share: the byte order, the constants of
 * the layout (MODEL_FORMAT.md), little-endian scalars and the stable codes
 * of the options.  Not part of the library's interface. */
#ifndef RK_MFILE_INTERNAL_H
#define RK_MFILE_INTERNAL_H

#include <math.h>
#include <string.h>
#include "rk_mfile.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define RK_MF_BIG 0
#elif defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define RK_MF_BIG 1
#else
#error "the model file needs the host byte order (__BYTE_ORDER__)"
#endif

_Static_assert(RK_ID_MAX <= 255, "ids are stored with a one-byte length");
_Static_assert(sizeof(float) == 4 && sizeof(double) == 8, "IEEE-754 float and double");

#define HDR_SIZE 128
#define REC_HEAD 16               /* tag, reserved, length */
#define CHUNK ((size_t)1 << 16)   /* bytes written or copied at a time */
#define CELLS_FLOOR ((uint64_t)1 << 26)
static const char MAGIC[8] = {'R', 'E', 'C', 'K', 'N', 'N', 'M', 'F'};

/* Record tags, in file order. */
enum { T_UIDS, T_IIDS, T_RPTR, T_RIDX, T_RVAL, T_IMEA, T_UBAS, T_IBAS, T_LLEN, T_LNBR, T_LSIM, T_LSUP,
       T_ROPT, T_KLEN, T_KNBR, T_KSIM, T_KSUP, T_POPT, T_GBUS, T_GBIS, T_GWTS, T_GCTS, T_END, T_N };
static const char TAGS[T_N][5] = {"UIDS", "IIDS", "RPTR", "RIDX", "RVAL", "IMEA", "UBAS", "IBAS", "LLEN",
                                  "LNBR", "LSIM", "LSUP", "ROPT", "KLEN", "KNBR", "KSIM", "KSUP", "POPT",
                                  "GBUS", "GBIS", "GWTS", "GCTS", "END "};

/* The ranking model's options record (MODEL_FORMAT.md): 6 u32, 7 f64. */
#define ROPT_LEN 80
/* The prediction model's options record (version 3): 5 f64, i32 epochs, u32 0. */
#define POPT_LEN 48
/* Version 2 holds no prediction model; a file written with one is version 3. */
#define RK_MFILE_VERSION_PLAIN 2

/* The version a model of prediction mode m is written as. */
static inline uint32_t version_for(rk_predict_mode m)
{
    return rk_predict_is_model(m) ? RK_MFILE_VERSION : RK_MFILE_VERSION_PLAIN;
}

/* ---- little-endian scalars --------------------------------------------------- */

static inline void put32(unsigned char *p, uint32_t v)
{
    for (int b = 0; b < 4; b++) p[b] = (unsigned char)(v >> (8 * b));
}
static inline void put64(unsigned char *p, uint64_t v)
{
    for (int b = 0; b < 8; b++) p[b] = (unsigned char)(v >> (8 * b));
}
static inline uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t get64(const unsigned char *p)
{
    return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}
static inline uint64_t f64_bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}
static inline double bits_f64(uint64_t u)
{
    double d;
    memcpy(&d, &u, 8);
    return d;
}

/* Reverse each elem-byte element of a[0..n) (big-endian hosts only). */
static inline void swap_elems(void *a, size_t n, size_t elem)
{
    unsigned char *p = a;
    for (size_t x = 0; x < n; x++, p += elem)
        for (size_t b = 0; b < elem / 2; b++) {
            unsigned char t = p[b];
            p[b] = p[elem - 1 - b];
            p[elem - 1 - b] = t;
        }
}

/* ---- codes ------------------------------------------------------------------- */

/* Stable codes in the file, whatever the enums become. */
static inline uint32_t metric_code(rk_metric m)
{
    const rk_metric_row *r = rk_metric_row_of(m);
    return r != NULL ? r->file_code : 0; /* the metric table's stable code */
}
static inline int metric_from_code(uint32_t c, rk_metric *m)
{
    return rk_metric_from_code(c, m) == RK_OK && !rk_metric_is_ranking(*m) ? 0 : -1; /* ranking lists are never saved */
}
static inline uint32_t mode_code(rk_predict_mode m)
{
    switch (m) {
    case RK_PREDICT_BASIC: return 1;
    case RK_PREDICT_MEANS: return 2;
    case RK_PREDICT_BASELINE: return 3;
    case RK_PREDICT_INTERPOLATE: return 4;
    case RK_PREDICT_GLOBAL: return 5;
    }
    return 0;
}
static inline int mode_from_code(uint32_t c, rk_predict_mode *m)
{
    static const rk_predict_mode by_code[] = {RK_PREDICT_BASIC, RK_PREDICT_MEANS, RK_PREDICT_BASELINE,
                                              RK_PREDICT_INTERPOLATE, RK_PREDICT_GLOBAL};
    if (c < 1 || c > 5) return -1;
    *m = by_code[c - 1];
    return 0;
}

/* Record sizes: head, payload, zero padding to 8, checksum. */
static inline uint64_t pad8(uint64_t len) { return (8 - (len & 7)) & 7; }
static inline uint64_t rec_size(uint64_t len) { return REC_HEAD + len + pad8(len) + 8; }

/* The neighbour arrays are padded to n_items x k cells in memory: a file may
 * ask for at most max(2^26, 16 x its length) cells, so that a crafted k
 * cannot make the reader allocate far more than the file holds. */
static inline int cells_ok(int32_t n_items, int32_t k, uint64_t file_len)
{
    uint64_t cells = (uint64_t)n_items * (uint64_t)k;
    uint64_t cap = file_len > UINT64_MAX / 16 ? UINT64_MAX : 16 * file_len;
    if (cap < CELLS_FLOOR) cap = CELLS_FLOOR;
    return cells <= cap;
}

#endif /* RK_MFILE_INTERNAL_H */
