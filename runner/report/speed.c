/* speed.c: analysis.py's log analysis and record (speed.h). Its rules are kept where they decide a
 * number or a field: the keyword must be a whole whitespace-separated word, float()'s notion of a
 * number, the two-stage skipping, Python's round() and repr() for ips, json.dumps for the text. */
#include "speed.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/check.h"
#include "../../core/regfile.h"
#include "../../core/banned.h"

#define SPEED_MAX_LOG (1u << 30)

/* Python's float() on one word: decimal or inf/nan (any case, signed); no hex, no trailing text. */
static bool py_float(const char *w, double *out)
{
    if (!*w || strpbrk(w, "xXpP")) return false;
    char *end;
    errno = 0;
    double v = strtod(w, &end);
    if (*end || end == w) return false;
    *out = v;
    return true;
}

/* The next whitespace-separated word of *p (str.split()), NUL-terminated in place; NULL at the end. */
static char *next_word(char **p)
{
    char *s = *p;
    while (*s && isspace((unsigned char)*s)) s++;
    if (!*s) return NULL;
    char *w = s;
    while (*s && !isspace((unsigned char)*s)) s++;
    if (*s) *s++ = 0;
    *p = s;
    return w;
}

/* The word after the first word equal to key, in a copy of line; NULL if none. Malloc'ed. */
static char *word_after(const char *line, const char *key)
{
    char *copy = xstrdup(line), *p = copy, *w, *res = NULL;
    bool hit = false;
    while ((w = next_word(&p)) != NULL) {
        if (hit) {
            res = xstrdup(w);
            break;
        }
        hit = !strcmp(w, key);
    }
    free(copy);
    return res;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int cards_of(const char *dev)
{
    const char *c = strchr(dev, 'C');
    if (strchr(dev, 'X')) return 1;
    if (!c) return 1;
    long v = strtol(c + 1, NULL, 10);
    return v > 0 && v < 1 << 20 ? (int)v : 1;
}

enum tipc_status speed_analyze(const struct speed_args *a, struct speed_result *r)
{
    memset(r, 0, sizeof *r);
    r->cards = cards_of(a->device_num ? a->device_num : "N1C1");
    char why[160];
    FILE *f = fopen_regular(a->filename, SPEED_MAX_LOG, why, sizeof why);
    if (!f) return error_at(TIPC_EIO, a->filename, 0, "cannot read the training log: %s", why);
    char *line = NULL;
    size_t cap = 0, rcap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, f)) > 0) {
        if (line[n - 1] == '\n') line[--n] = 0;
        if (a->keyword && *a->keyword && strstr(line, a->keyword)) {
            char *w = word_after(line, a->keyword);
            double v;
            if (w && py_float(w, &v)) {
                r->rec = xgrow(r->rec, sizeof *r->rec, (size_t)r->nrec + 1, &rcap);
                r->rec[r->nrec++] = v;
            }
            free(w);
        }
        if (a->convergence_key && *a->convergence_key && strstr(line, a->convergence_key)) {
            char *w = word_after(line, a->convergence_key);   /* the last such line wins */
            if (w) {
                char *o = w;
                for (const char *c = w; *c; c++)
                    if (*c != ',') *o++ = *c;
                *o = 0;
                free(r->loss);
                r->loss = w;
            }
        }
    }
    bool bad = ferror(f);
    free(line);
    fclose(f);
    if (bad) return error_at(TIPC_EIO, a->filename, 0, "cannot read the training log: %s", strerror(EIO));
    int skip = a->skip_steps > 0 ? a->skip_steps : 0;
    r->raised = !a->has_batch;   /* Python's `None <= 0` raises before the unit is reset */
    if (a->base_batch_size <= 0 || r->nrec <= skip + 10) return TIPC_OK;
    int m = r->nrec - skip;
    double *s = xmalloc(sizeof *s * (size_t)m);
    memcpy(s, r->rec + skip, sizeof *s * (size_t)m);
    qsort(s, (size_t)m, sizeof *s, cmp_double);
    int cut = (int)(m * 0.05) > 5 ? (int)(m * 0.05) : 5;   /* max(int(len * 0.05), 5) from each end */
    double sum = 0;
    for (int i = cut; i < m - cut; i++) sum += s[i];
    if (m - 2 * cut > 0) {
        r->trimmed_min = s[cut], r->trimmed_max = s[m - cut - 1];
        double ips = r->cards * (sum / (m - 2 * cut));
        char buf[64];
        snprintf(buf, sizeof buf, "%.3f", ips);   /* Python's round(x, 3): correctly rounded */
        r->ips = strtod(buf, NULL);
        r->ok = isfinite(r->ips);
        if (!r->ok) r->ips = 0;
    }
    free(s);
    return TIPC_OK;
}

void speed_result_free(struct speed_result *r)
{
    free(r->rec);
    free(r->loss);
    memset(r, 0, sizeof *r);
}

void speed_py_float(double x, char *buf, size_t n)
{
    if (isnan(x)) { snprintf(buf, n, "NaN"); return; }
    if (isinf(x)) { snprintf(buf, n, "%sInfinity", x < 0 ? "-" : ""); return; }
    char e[40];
    int p;
    for (p = 0; p < 17; p++) {   /* the fewest digits that read back as x */
        snprintf(e, sizeof e, "%.*e", p, x);
        if (strtod(e, NULL) == x) break;
    }
    const char *sign = e[0] == '-' ? "-" : "", *m = e[0] == '-' ? e + 1 : e;
    char digits[24];
    int nd = 0;
    const char *c = m;
    for (; *c && *c != 'e'; c++)
        if (isdigit((unsigned char)*c)) digits[nd++] = *c;
    digits[nd] = 0;
    int exp10 = (int)strtol(c + 1, NULL, 10);
    while (nd > 1 && digits[nd - 1] == '0') digits[--nd] = 0;
    char out[64], *o = out;
    o += snprintf(o, sizeof out, "%s", sign);
    if (exp10 >= -4 && exp10 < 16) {   /* repr: fixed notation for 1e-4 <= |x| < 1e16 */
        int decpt = exp10 + 1;
        if (decpt <= 0) {
            *o++ = '0', *o++ = '.';
            for (int i = 0; i < -decpt; i++) *o++ = '0';
            o += snprintf(o, sizeof out - (size_t)(o - out), "%s", digits);
        } else {
            for (int i = 0; i < decpt; i++) *o++ = i < nd ? digits[i] : '0';
            *o++ = '.';
            o += snprintf(o, sizeof out - (size_t)(o - out), "%s", decpt < nd ? digits + decpt : "0");
        }
    } else {
        *o++ = digits[0];
        if (nd > 1) o += snprintf(o, sizeof out - (size_t)(o - out), ".%s", digits + 1);
        o += snprintf(o, sizeof out - (size_t)(o - out), "e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
    }
    *o = 0;
    snprintf(buf, n, "%s", out);
}

/* json.dumps(str) with ensure_ascii: \" \\ \n \r \t \b \f, other controls and non-ASCII as \uXXXX
 * (bytes that are no UTF-8 as Python's surrogateescape gives them: \udcXX). */
static void json_str(FILE *o, const char *s)
{
    fputc('"', o);
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned c = *p;
        if (c == '"' || c == '\\') fprintf(o, "\\%c", c), p++;
        else if (c == '\n') fputs("\\n", o), p++;
        else if (c == '\r') fputs("\\r", o), p++;
        else if (c == '\t') fputs("\\t", o), p++;
        else if (c == '\b') fputs("\\b", o), p++;
        else if (c == '\f') fputs("\\f", o), p++;
        else if (c < 0x20 || c == 0x7f) fprintf(o, "\\u%04x", c), p++;
        else if (c < 0x80) fputc((int)c, o), p++;
        else {
            int len = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
            unsigned cp = len == 4 ? c & 7 : len == 3 ? c & 15 : c & 31;
            for (int i = 1; i < len; i++) {
                if ((p[i] & 0xc0) != 0x80) { len = 0; break; }
                cp = cp << 6 | (p[i] & 0x3f);
            }
            if (len == 0 || (len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp < 0xe000))) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff))) {
                fprintf(o, "\\udc%02x", c), p++;
                continue;
            }
            if (cp >= 0x10000) cp -= 0x10000, fprintf(o, "\\u%04x\\u%04x", 0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff));
            else fprintf(o, "\\u%04x", cp);
            p += len;
        }
    }
    fputc('"', o);
}

static void json_env(FILE *o, const char *name)
{
    const char *v = getenv(name);
    if (v) json_str(o, v);
    else fputs("null", o);
}

/* re.match(r'DP.-MP.-PP.') and its siblings: PREFIX with '.' any one character. */
static bool prefix_like(const char *s, const char *pat)
{
    for (; *pat; pat++, s++)
        if (!*s || (*pat != '.' && *pat != *s)) return false;
    return true;
}

char *speed_record_json(const struct speed_args *a, const struct speed_result *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *o = open_memstream(&buf, &len);
    if (!o) tipc_die_msg(TIPC_EINTERNAL, "open_memstream: %s", strerror(errno));
    const char *rm = a->run_mode ? a->run_mode : "DP";
    bool coll = prefix_like(rm, "DP.-MP.-PP.") || strstr(rm, "DP_MoE_C") || strstr(rm, "Sharding_MoE_C") ||
                prefix_like(rm, "DP.-MP.") || prefix_like(rm, "DP.-Sharding.");
    fputs("{\"model_branch\": ", o), json_env(o, "model_branch");
    fputs(", \"model_commit\": ", o), json_env(o, "model_commit");
    fputs(", \"model_name\": ", o), json_str(o, a->model_name ? a->model_name : "model_name");
    if (a->has_batch) fprintf(o, ", \"batch_size\": %d", a->base_batch_size);
    else fputs(", \"batch_size\": null", o);
    fputs(", \"fp_item\": ", o);
    if (a->fp_item) json_str(o, a->fp_item);
    else fputs("null", o);
    fputs(", \"run_mode\": ", o), json_str(o, coll ? "Collective" : rm);
    fputs(", \"convergence_value\": ", o);
    if (r->loss && a->convergence_key && *a->convergence_key) json_str(o, r->loss);
    else fputs("0", o);
    fputs(", \"convergence_key\": ", o), json_str(o, a->convergence_key ? a->convergence_key : "");
    char ips[64] = "0";
    if (r->ok) speed_py_float(r->ips, ips, sizeof ips);
    fprintf(o, ", \"ips\": %s", ips);
    fputs(", \"speed_unit\": ", o), json_str(o, r->ok || r->raised ? (a->speed_unit ? a->speed_unit : "images/s") : "");
    fputs(", \"device_num\": ", o), json_str(o, a->device_num ? a->device_num : "N1C1");
    fputs(", \"model_run_time\": ", o), json_env(o, "model_run_time");
    fputs(", \"frame_commit\": ", o), json_env(o, "frame_commit");
    fputs(", \"frame_version\": ", o), json_env(o, "frame_version");
    fputc('}', o);
    if (fclose(o) != 0) tipc_die_msg(TIPC_EINTERNAL, "memstream: %s", strerror(errno));
    return buf;
}
