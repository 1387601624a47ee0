/* testutil.h: shared helpers for the cmocka unit tests.
 *  - include order cmocka needs (stdarg, stddef, setjmp, stdint) in one place
 *  - assert_allclose(): |got-want| <= atol + rtol*|want|, prints the first mismatches
 *  - die trap: CHECK/BUG inside the code under test longjmp back instead of exiting
 *  - capture_stderr_*(): read what a call printed to stderr */
#ifndef TIPC_TESTUTIL_H
#define TIPC_TESTUTIL_H
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../core/check.h"

static inline void assert_allclose_impl(const float *got, const float *want, size_t n, double atol,
                                        double rtol, const char *label, const char *file, int line)
{
    size_t bad = 0;
    double max_abs = 0, max_rel = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - (double)want[i]);
        double r = d / (fabs((double)want[i]) + 1e-12);
        if (d > max_abs) max_abs = d;
        if (r > max_rel) max_rel = r;
        if (!(d <= atol + rtol * fabs((double)want[i]))) {
            if (bad < 5)
                fprintf(stderr, "%s:%d: %s[%zu]: got %.8g want %.8g\n", file, line, label, i,
                        (double)got[i], (double)want[i]);
            bad++;
        }
    }
    if (bad) {
        fprintf(stderr, "%s: %zu of %zu mismatch (max abs %.3g, max rel %.3g)\n", label, bad, n,
                max_abs, max_rel);
        _fail(file, line);
    }
}
#define assert_allclose(got, want, n, atol, rtol, label) \
    assert_allclose_impl((got), (want), (n), (atol), (rtol), (label), __FILE__, __LINE__)

/* Die trap: a test sets it with TEST_EXPECT_DIE { code } to check a CHECK() fires. */
static jmp_buf test_die_jmp;
static int test_die_code;
static inline void test_die_routine(const char *msg, int code)
{
    (void)msg;
    test_die_code = code;
    longjmp(test_die_jmp, 1);
}

/* Capture stderr into a temp file for the duration of a call. */
struct capture { int saved_fd; FILE *tmp; };
static inline void capture_stderr_begin(struct capture *c)
{
    fflush(stderr);
    c->tmp = tmpfile();
    c->saved_fd = dup(2);
    dup2(fileno(c->tmp), 2);
}
/* Returns a malloc'ed string with everything written to stderr since begin. */
static inline char *capture_stderr_end(struct capture *c)
{
    fflush(stderr);
    dup2(c->saved_fd, 2);
    close(c->saved_fd);
    long n = ftell(c->tmp);
    char *s = calloc(1, (size_t)(n > 0 ? n : 0) + 1);
    rewind(c->tmp);
    if (n > 0 && fread(s, 1, (size_t)n, c->tmp) != (size_t)n) s[0] = 0;
    fclose(c->tmp);
    return s;
}
#endif
