/* source.h: where training/eval batches come from: engine/data's loader over a dataset on
 * disk (list or ImageFolder layout), or a built-in synthetic source (class-coloured noisy
 * images, deterministic for a seed) used when DataLoader.synthetic says so, or on "auto"
 * when the data path does not exist. Batches are uint8 NHWC + int32 labels (loader.h). */
#ifndef TIPC_SOURCE_H
#define TIPC_SOURCE_H
#include <stdbool.h>
#include <stdint.h>

#include "../data/loader.h"
#include "../io/recipe.h"

struct source {
    bool synthetic;
    int steps_per_epoch, n_items, batch, crop, num_classes;
    const char *what;            /* "train" / "val", for messages */
    /* loader */
    struct dataset ds;
    struct loader *L;
    /* synthetic */
    uint8_t *images;             /* (n_items, crop, crop, 3) */
    int32_t *labels;             /* (n_items) */
    int32_t *order;              /* (n_items) this epoch's permutation (train) */
    uint64_t seed;
    int epoch, step;
    bool train;
    struct batch b;
};

/* start_epoch, start_step: the position of the first batch (a resume: epoch, step inside it);
 * the batches from there on are those an uninterrupted run sees. */
enum tipc_status source_open(struct source *s, const struct recipe *r, bool train, int rank, int world,
                             int start_epoch, int start_step);
enum tipc_status source_next(struct source *s, const struct batch **b);
/* Where an item comes from, for error messages ("data/train_list.txt:14" or the path). */
const char *source_describe(const struct source *s);
/* Which data this is, for the run's record: "synthetic images made in memory (DataLoader.synthetic: auto,
 * no 'PATH')", "PATH: made by tipc prepare from URL", "PATH: tipc prepare's synthetic default
 * (synthetic classes=10 ...)", "PATH (no tipc prepare marker: provided by the user)". *synthetic:
 * generated images rather than a real dataset. */
void source_origin(const struct source *s, const struct recipe *r, char *buf, size_t n, bool *synthetic);
void source_free(struct source *s);

#endif
