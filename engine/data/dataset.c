/* dataset.c: read a PaddleClas list file or walk an ImageFolder tree into (path, label) arrays.
 * Names only: whether each file decodes is found out by the loader, which reports the list line. */
#include "dataset.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "../../core/check.h"
#include "../../core/regfile.h"
#include "../../core/parse.h"
#include "../../core/banned.h"

struct grow_list { size_t cap_p, cap_l, cap_ln; };

static void push(struct dataset *ds, struct grow_list *g, char *path, int label, int line)
{
    ds->paths = xgrow(ds->paths, sizeof *ds->paths, (size_t)ds->n + 1, &g->cap_p);
    ds->labels = xgrow(ds->labels, sizeof *ds->labels, (size_t)ds->n + 1, &g->cap_l);
    if (line > 0) ds->list_lines = xgrow(ds->list_lines, sizeof *ds->list_lines, (size_t)ds->n + 1, &g->cap_ln);
    ds->paths[ds->n] = path;
    ds->labels[ds->n] = label;
    if (line > 0) ds->list_lines[ds->n] = line;
    ds->n++;
    if (label + 1 > ds->num_classes) ds->num_classes = label + 1;
}

/* "relative/path.jpg label": the label is the last whitespace-separated field. */
static enum tipc_status parse_list_line(struct dataset *ds, struct grow_list *g, char *line, int ln)
{
    size_t n = strlen(line);
    while (n && isspace((unsigned char)line[n - 1])) line[--n] = 0;
    char *p = line;
    while (isspace((unsigned char)*p)) p++;
    if (!*p) return TIPC_OK;
    char *sp = p + strlen(p);
    while (sp > p && !isspace((unsigned char)sp[-1])) sp--;
    int label = -1;
    if (sp == p) return error_at(TIPC_EDATA, ds->list_file, ln, "expected 'path label', found '%s'", p);
    if (!parse_int(sp, 0, 1 << 24, &label))
        return error_at(TIPC_EDATA, ds->list_file, ln, "label '%s' is not a non-negative integer", sp);
    char *end = sp;
    while (end > p && isspace((unsigned char)end[-1])) end--;
    *end = 0;
    push(ds, g, xasprintf("%s/%s", ds->root, p), label, ln);
    return TIPC_OK;
}

static enum tipc_status open_list(struct dataset *ds)
{
    char why[160];
    FILE *f = fopen_regular(ds->list_file, REGFILE_MAX_TEXT, why, sizeof why);
    if (!f) return error_msg(TIPC_EDATA, "cannot read image list '%s': %s", ds->list_file, why);
    struct grow_list g = {0};
    char *line = NULL;
    size_t cap = 0;
    enum tipc_status st = TIPC_OK;
    for (int ln = 1; st == TIPC_OK && getline(&line, &cap, f) >= 0; ln++) st = parse_list_line(ds, &g, line, ln);
    free(line);
    fclose(f);
    if (st == TIPC_OK && ds->n == 0) st = error_at(TIPC_EDATA, ds->list_file, 0, "no images listed");
    return st;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Sorted names of dir's entries that are folders (want_dirs) or JPEG files. */
static char **list_dir(const char *dir, bool want_dirs, int *n_out)
{
    DIR *d = opendir(dir);
    char **names = NULL;
    size_t cap = 0;
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char *full = xasprintf("%s/%s", dir, e->d_name);
        struct stat st;
        bool isdir = stat(full, &st) == 0 && S_ISDIR(st.st_mode);
        free(full);
        const char *ext = strrchr(e->d_name, '.');
        bool jpeg = ext && (!strcasecmp(ext, ".jpg") || !strcasecmp(ext, ".jpeg"));
        if (want_dirs ? !isdir : (isdir || !jpeg)) continue;
        names = xgrow(names, sizeof *names, (size_t)n + 1, &cap);
        names[n++] = xstrdup(e->d_name);
    }
    if (d) closedir(d);
    if (n) qsort(names, (size_t)n, sizeof *names, cmp_str);
    *n_out = n;
    return names;
}

static void free_names(char **names, int n)
{
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
}

static enum tipc_status open_folder(struct dataset *ds, const char *split_dir)
{
    int nc = 0;
    char **classes = list_dir(split_dir, true, &nc);
    struct grow_list g = {0};
    for (int c = 0; c < nc; c++) {
        char *cdir = xasprintf("%s/%s", split_dir, classes[c]);
        int nf = 0;
        char **files = list_dir(cdir, false, &nf);
        for (int i = 0; i < nf; i++) push(ds, &g, xasprintf("%s/%s", cdir, files[i]), c, 0);
        free_names(files, nf);
        free(cdir);
    }
    free_names(classes, nc);
    ds->num_classes = nc;
    if (ds->n == 0) {
        error_msg(TIPC_EDATA, "'%s': no class folders with .jpg/.jpeg images", split_dir);
        error_hint("expected %s/<class>/<image>.jpg, or a train_list.txt/val_list.txt in the dataset root", split_dir);
        return TIPC_EDATA;
    }
    return TIPC_OK;
}

enum tipc_status dataset_open(struct dataset *ds, const char *root, bool train)
{
    memset(ds, 0, sizeof *ds);
    ds->root = xstrdup(root);
    char *list = xasprintf("%s/%s", root, train ? "train_list.txt" : "val_list.txt");
    char *split = xasprintf("%s/%s", root, train ? "train" : "val");
    struct stat st;
    enum tipc_status s;
    if (stat(list, &st) == 0) {
        ds->list_file = list;
        list = NULL;
        s = open_list(ds);
    } else if (stat(split, &st) == 0 && S_ISDIR(st.st_mode)) {
        s = open_folder(ds, split);
    } else {
        s = error_msg(TIPC_EDATA, "dataset '%s' has neither '%s' nor a '%s' folder", root, list, split);
        error_hint("run 'tipc prepare CONFIG MODE' to make the lite dataset, or pass --data-path DIR");
    }
    free(list);
    free(split);
    if (s != TIPC_OK) dataset_free(ds);
    return s;
}

void dataset_free(struct dataset *ds)
{
    for (int i = 0; i < ds->n; i++) free(ds->paths[i]);
    free(ds->paths);
    free(ds->labels);
    free(ds->list_lines);
    free(ds->list_file);
    free(ds->root);
    memset(ds, 0, sizeof *ds);
}
