/* fuzz_rdzv.c: libFuzzer harness for the rendezvous store's request logic (runner/launch/rdzv_store.c),
 * the code behind every HTTP request node 0's launcher serves, without sockets. The input is a
 * sequence of requests separated by "\n\n"; each is "M URL\nTOKEN\nWAIT\nCREATE\nBODY" where M is
 * G (GET), P (PUT) or anything else (another method); missing fields are absent (NULL). One fresh
 * store per input (job "job", token "tok"), waits capped at 0 ms. Errors are fine; crashes, leaks,
 * sanitizer reports and hangs are bugs.   make fuzz FUZZ_SECONDS=600 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../runner/launch/rdzv_store.h"

static char *field(char **p, char *end)
{
    if (!*p || *p > end) return NULL;
    char *s = *p, *nl = memchr(s, '\n', (size_t)(end - s));
    if (nl) *nl = 0, *p = nl + 1;
    else *p = NULL;
    return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 1);
    memcpy(buf, data, size);
    buf[size] = 0;
    struct rdzv_store *S = rdzv_store_new("job", "tok");
    rdzv_store_limit_wait(S, 0);
    char *p = buf, *end = buf + size;
    while (p && p < end) {
        char *req_end = strstr(p, "\n\n");
        char *stop = req_end ? req_end : end;
        if (req_end) *req_end = 0;
        char *q = p;
        char *line = field(&q, stop), *tok = field(&q, stop), *wait = field(&q, stop), *create = field(&q, stop);
        const char *body = q && q < stop ? q : NULL;
        size_t n = body ? (size_t)(stop - body) : 0;
        const char *method = !line || !*line ? "DELETE" : line[0] == 'G' ? "GET" : line[0] == 'P' ? "PUT" : line;
        const char *url = line && *line ? line + 1 : NULL;
        if (url && *url == ' ') url++;
        struct rdzv_reply r;
        if (!rdzv_store_precheck(S, method, url, tok, wait, &r))
            rdzv_store_handle(S, method, url, tok, wait, create, body, n, n > RDZV_MAX_VALUE, &r);
        free(r.body);
        p = req_end ? req_end + 2 : NULL;
    }
    rdzv_store_free(S);
    free(buf);
    return 0;
}
