/* interrupt.c: see interrupt.h. The handler touches only the flag, the group slots and the wake
 * pipe (async-signal-safe: kill, write). */
#include "interrupt.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "banned.h"

static volatile sig_atomic_t got_signal;
static volatile pid_t groups[INTERRUPT_MAX_GROUPS];
static int wake = -1;
static bool sigint_ignored;

static void on_signal(int sig)
{
    int e = errno;
    if (sig != SIGCHLD) {
        if (!got_signal) got_signal = sig;
        for (int i = 0; i < INTERRUPT_MAX_GROUPS; i++) {
            pid_t g = groups[i];
            if (g > 0) kill(-g, sig); /* the group's leader stops the rest of it (spawn.h, launch) */
        }
    }
    if (wake >= 0) {
        char b = (char)sig;
        ssize_t w = write(wake, &b, 1);
        (void)w;
    }
    errno = e;
}

void interrupt_init(unsigned flags, int wake_fd)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGCHLD};
    wake = wake_fd;
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        if (sigs[i] == SIGCHLD && !(flags & INTERRUPT_WAKE_ON_CHILD)) continue;
        if (flags & INTERRUPT_KEEP_IGNORED) {
            struct sigaction old;
            sigaction(sigs[i], NULL, &old);
            if (old.sa_handler == SIG_IGN && sigs[i] != SIGCHLD) {
                if (sigs[i] == SIGINT) sigint_ignored = true;
                continue;
            }
        }
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sa.sa_flags = flags & INTERRUPT_RESTART ? SA_RESTART : 0;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
}

int interrupted(void) { return got_signal; }

void interrupt_set(int sig)
{
    if (!got_signal) got_signal = sig;
}

bool interrupt_sigint_ignored(void) { return sigint_ignored; }

volatile int *interrupt_flag(void) { return (volatile int *)&got_signal; }

void interrupt_forward(pid_t group)
{
    for (int i = 0; i < INTERRUPT_MAX_GROUPS; i++)
        if (groups[i] <= 0) {
            groups[i] = group;
            return;
        }
    BUG("interrupt_forward: more than %d process groups", INTERRUPT_MAX_GROUPS);
}

void interrupt_unforward(pid_t group)
{
    for (int i = 0; i < INTERRUPT_MAX_GROUPS; i++)
        if (groups[i] == group) groups[i] = 0;
}
