/* rk_note.c — one-line notes to the caller (rk_note.h). */
#include "rk_note.h"

#include <stdarg.h>
#include <stdio.h>

void rk_note(rk_note_fn fn, void *ud, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    if (fn == NULL) return;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fn(ud, buf);
}
