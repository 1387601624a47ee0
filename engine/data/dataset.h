/* dataset.h: an image classification dataset on disk: a list of (path, label).
 * Two layouts, detected from the root: PaddleClas lists (ROOT/train_list.txt, ROOT/val_list.txt,
 * lines `relative/path.jpg label`) and ImageFolder (ROOT/train/<class>/<image>, ROOT/val/<class>/<image>,
 * label = index of the class folder in sorted order). Reads names only; decoding is jpeg.h's. */
#ifndef TIPC_DATASET_H
#define TIPC_DATASET_H
#include <stdbool.h>
#include "../../core/status.h"

struct dataset {
    char *root;        /* dataset root as given */
    int n;             /* number of items */
    char **paths;      /* (n) full paths */
    int *labels;       /* (n) class ids in [0, num_classes) */
    int num_classes;   /* ImageFolder: number of class folders; lists: max label + 1 */
    char *list_file;   /* list layout: the list file read; NULL for ImageFolder */
    int *list_lines;   /* (n) list layout: 1-based line of each item; NULL for ImageFolder */
};

/* Open the train (train=true) or val split under root. Errors name the file and line. */
enum tipc_status dataset_open(struct dataset *ds, const char *root, bool train);
/* Free everything; accepts a zeroed struct. */
void dataset_free(struct dataset *ds);

#endif
