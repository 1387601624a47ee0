/* notice.c: the job's failure notice (the store's `fail` key, created once: the first failure
 * of a round is what every node reads as the cause) and whether the store still answers. Below the
 * rest of the launcher: the probe, the join, the round's end and the agent all post through it. */
#include "internal.h"

#include <string.h>

#include "../../core/check.h"
#include "../../core/time.h"
#include "../../core/banned.h"

/* False once the watcher has not reached the store for 2 s: skip requests that would only wait
 * for their connect timeout while ranks are being stopped. */
bool store_alive(const struct launch_job *J)
{
    return !J->watcher_on || now_seconds() - J->store_ok_at < 2.0;
}

void job_post_failure(struct launch_job *J, const char *msg)
{
    if (!store_alive(J)) return;
    bool created = false;
    rdzv_put(&J->cl, "fail", msg, strlen(msg), true, &created);
}

void job_post_final(struct launch_job *J, const char *msg)
{
    if (!store_alive(J)) return;
    bool created = false;
    rdzv_put(&J->cl, "final", "1", 1, true, &created);   /* before the notice: whoever reads it sees this */
    job_post_failure(J, msg);
}

char *job_take_notice(struct launch_job *J)
{
    pthread_mutex_lock(&J->mu);
    char *s = J->notice ? xstrdup(J->notice) : NULL;
    pthread_mutex_unlock(&J->mu);
    return s;
}
