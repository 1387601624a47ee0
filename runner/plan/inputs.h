/* inputs.h: the files a `python:tipc` config's commands read (the recipe after `-c`, the image
 * after `--img-path`), resolved relative to the config and checked before anything runs. */
#ifndef TIPC_PLAN_INPUTS_H
#define TIPC_PLAN_INPUTS_H

#include "plan.h"

/* For our own configs (p->ours): each relative input path is looked up in the config's folder and
 * every folder above it, nearest first (so `configs/m/x.yaml` in `ROOT/configs/m/t.txt` is
 * ROOT/configs/m/x.yaml, wherever tipc runs: an installed share/tipc, a checkout); where that folder
 * is not the working directory the command gets the absolute path. Found in none of them, it is
 * looked up last in the working directory (as the original harness resolves every relative path:
 * a config copied outside any configs/ folder, run from a checkout). A path found nowhere is an
 * error naming the config line that names it (TIPC_EUSAGE), after checking all of them. Paddle configs are left as
 * the original harness runs them (relative to the working directory, the repository root). */
struct tipc_config;
enum tipc_status plan_resolve_inputs(struct plan *p, const struct tipc_config *cfg);

#endif
