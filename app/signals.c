#include "signals.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "io/fsutil.h"

static volatile sig_atomic_t stop_signal = 0;       /* SIGINT, SIGTERM or SIGHUP received */
static volatile sig_atomic_t checkpoint_signal = 0; /* SIGUSR1 received */
static volatile sig_atomic_t final_written = 0;     /* the run's final state is on disk */

static void say(const char *text)
{
    ssize_t ignored = write(STDERR_FILENO, text, strlen(text));
    (void)ignored; /* nothing more can be done from a signal handler */
}

static void on_stop(int sig)
{
    if (!stop_signal) {
        stop_signal = sig;
        return;
    }
    if (final_written) { /* nothing is lost by leaving now: the status the first signal asked for */
        say("\nheatsolve: interrupted again after the final checkpoint was written: leaving now; continue with "
            "--restart latest\n");
        _exit(128 + stop_signal);
    }
    fs_temp_remove_all(); /* async-signal-safe: unlink of recorded names */
    say("\nheatsolve: interrupted again while finishing the final step or writing the final checkpoint: "
        "leaving without it (exit 3); earlier checkpoints are intact, continue with --restart latest\n");
    _exit(EXIT_INTERRUPTED_TWICE);
}

static void on_checkpoint(int sig) { checkpoint_signal = sig; }

void signals_install_checkpoint_request(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_checkpoint;
    sigaction(SIGUSR1, &sa, NULL);
}

void signals_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_stop;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sa.sa_handler = on_checkpoint;
    sigaction(SIGUSR1, &sa, NULL);
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, NULL);
    sigaction(SIGXFSZ, &sa, NULL);
}

int signals_stop_requested(void) { return stop_signal; }

void signals_final_state_written(void) { final_written = 1; }

int signals_take_checkpoint_request(void)
{
    if (!checkpoint_signal) return 0;
    checkpoint_signal = 0;
    return 1;
}
