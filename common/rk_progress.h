/* rk_progress.h — the progress callback every long stage reports through.
 *
 * A stage (parse, CSR, similarity, top-N, write) calls the callback from one
 * thread with how much of it is done, in the stage's own unit: `done` of
 * `total` `unit`s ("bytes", "items", "users", "rows").  total may be 0 when
 * it is not known in advance.  The library never draws anything: the CLI
 * turns these calls into a line with a rate and the time left.
 */
#ifndef RK_PROGRESS_H
#define RK_PROGRESS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*rk_progress_fn)(void *ud, const char *stage, double done, double total, const char *unit);

/* Call p (when not NULL). */
#define RK_PROGRESS(p, ud, stage, done, total, unit)                           \
    do {                                                                       \
        if ((p) != NULL) (p)((ud), (stage), (double)(done), (double)(total), (unit)); \
    } while (0)

#ifdef __cplusplus
}
#endif
#endif /* RK_PROGRESS_H */
