/* speed.h: a training log into a speed record, as Paddle's benchmark analysis.py does
 * (PaddlePaddle/benchmark tools/scripts/analysis.py, develop 4325f722, last changed a3008a5b
 * 2023-05-10; benchmark_train.sh calls it as ${BENCHMARK_ROOT}/scripts/analysis.py).
 *
 * The record is one JSON object, no newline, with analysis.py's keys in its order and Python's
 * json.dumps formatting (", " and ": ", ASCII only):
 *   model_branch, model_commit (env, null when unset), model_name, batch_size, fp_item,
 *   run_mode ("Collective" for DPx-MPx-PPx-style modes), convergence_value (the word after the
 *   last `loss:`, commas removed, as a string; 0 when none), convergence_key, ips (number, 3
 *   decimals; 0 when too few records), speed_unit ("" when too few records), device_num,
 *   model_run_time, frame_commit, frame_version (env, null when unset).
 * ips: every line holding KEYWORD gives the word after the word equal to KEYWORD (a number, else the
 * line is skipped); the first skip_steps are dropped; of the rest, sorted, max(5%, 5) are dropped at
 * each end; the mean of what is left times the cards (the digits after 'C' in device_num). Fewer
 * than skip_steps + 11 records: ips 0 ("too few logs printed"). */
#ifndef TIPC_SPEED_H
#define TIPC_SPEED_H
#include <stdbool.h>
#include <stddef.h>
#include "../../core/status.h"

struct speed_args {
    const char *filename, *speed_log_file, *model_name, *fp_item, *run_mode, *keyword, *device_num;
    const char *speed_unit, *convergence_key;
    int base_batch_size;   /* <= 0: analysis.py's "base_batch_size should larger than 0": ips 0 */
    bool has_batch;        /* --base_batch_size given (else null in the record) */
    int skip_steps;
};

struct speed_result {
    double *rec;           /* (nrec) the KEYWORD values, in log order */
    int nrec;
    double ips;            /* 0 when none */
    bool ok;               /* enough records and a finite ips */
    bool raised;           /* where analysis.py raises (an unreadable log, no --base_batch_size): the
                              record keeps --speed_unit, as its exception path leaves it */
    char *loss;            /* convergence value as written in the log, NULL: none (0 in the record) */
    int cards;             /* the multiplier from device_num */
    double trimmed_min, trimmed_max;   /* range of the values averaged */
};

/* Read the log and compute. TIPC_EIO (with a message) when it cannot be read; too few records is
 * not an error here (r->ok false). */
enum tipc_status speed_analyze(const struct speed_args *a, struct speed_result *r);
/* The record's JSON text (malloc'ed), environment values read now. */
char *speed_record_json(const struct speed_args *a, const struct speed_result *r);
void speed_result_free(struct speed_result *r);

/* Python's repr() of a float (shortest round-trip digits, ".0" on integers, exponent form outside
 * 1e-4..1e16), into buf. */
void speed_py_float(double x, char *buf, size_t n);

#endif
