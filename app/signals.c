#include "signals.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "io/fsutil.h"
#include "solver/error.h"

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

/* handler (or SIG_IGN) for sig, no other signal blocked meanwhile. sigaction fails only for a signal
 * that cannot be caught, none of these: the warning would name a broken C library. */
static void set_handler(int sig, void (*handler)(int))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = handler;
    if (sigaction(sig, &sa, NULL) != 0)
        heat_warn("signal %d (%s) keeps its default action: sigaction failed: %s", sig, strsignal(sig),
                  strerror(errno));
}

void signals_install_checkpoint_request(void) { set_handler(SIGUSR1, on_checkpoint); }

void signals_install(void)
{
    set_handler(SIGINT, on_stop);
    set_handler(SIGTERM, on_stop);
    set_handler(SIGHUP, on_stop);
    set_handler(SIGUSR1, on_checkpoint);
    set_handler(SIGPIPE, SIG_IGN);
    set_handler(SIGXFSZ, SIG_IGN);
}

int signals_stop_requested(void) { return stop_signal; }

void signals_final_state_written(void) { final_written = 1; }

int signals_take_checkpoint_request(void)
{
    if (!checkpoint_signal) return 0;
    checkpoint_signal = 0;
    return 1;
}
