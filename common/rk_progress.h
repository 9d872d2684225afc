/* rk_progress.h — the progress callback every long stage reports through.
 *
 * A stage (parse, CSR, similarity, top-N, write) calls the callback from one
 * thread with how much of it is done, in the stage's own unit: `done` of
 * `total` `unit`s ("bytes", "items", "users", "rows").  total may be 0 when
 * it is not known in advance.  The library never draws anything: the CLI
 * turns these calls into a line with a rate and the time left.
 *
 * The callback returns 0 to go on.  Any other value asks the call to stop:
 * the long stages of a fit and its recommendations (the similarity rows and
 * top-N, on the CPU or a GPU, and the most-popular baseline) check it at
 * each report but their last and return RK_E_CANCELLED, with what they
 * allocated freed; the other stages (the parse, the CSR build, the writing:
 * the command's, whose callback never stops) ignore it.
 */
#ifndef RK_PROGRESS_H
#define RK_PROGRESS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef int (*rk_progress_fn)(void *ud, const char *stage, double done, double total, const char *unit);

/* Call p (when not NULL); its answer ignored. */
#define RK_PROGRESS(p, ud, stage, done, total, unit)                           \
    do {                                                                       \
        if ((p) != NULL) (void)(p)((ud), (stage), (double)(done), (double)(total), (unit)); \
    } while (0)

/* Call p (when not NULL): 1 when it asks to stop before the stage's end
 * (done < total), else 0 (a stage's last report never stops it). */
#define RK_PROGRESS_STOPS(p, ud, stage, done, total, unit)                                   \
    ((p) != NULL && (p)((ud), (stage), (double)(done), (double)(total), (unit)) != 0 && \
     (double)(done) < (double)(total))

/* The message of a stage stopped by its callback (rk_error_set's). */
#define RK_STOPPED_MSG "%s: stopped by the caller's progress callback"

#ifdef __cplusplus
}
#endif
#endif /* RK_PROGRESS_H */
