/* rk_note.h — one-line notes to the caller (prefix rk_note).
 *
 * The library never prints: what a run wants to tell its user (a device
 * fallback, ids nobody rated) goes to a callback of the caller's, which the
 * CLI prints on stderr.  Every note of the library is formatted here.
 */
#ifndef RK_NOTE_H
#define RK_NOTE_H

#ifdef __cplusplus
extern "C" {
#endif

/* The caller's callback: msg is one line without its newline. */
typedef void (*rk_note_fn)(void *ud, const char *msg);

/*! rk_note() : format a note (printf style; at most 1023 bytes, cut beyond)
 *  and hand it to fn; nothing when fn is NULL. */
void rk_note(rk_note_fn fn, void *ud, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#ifdef __cplusplus
}
#endif
#endif /* RK_NOTE_H */
