#pragma once
/*
 * What signals ask of a run. The handlers only record; the time loop reads
 * the requests between batches:
 *   SIGINT, SIGTERM, SIGHUP  finish the step, write a final checkpoint, exit 128+signal
 *   SIGUSR1                  write a checkpoint and continue
 *   SIGPIPE                  ignored: a closed output stream (`| head`) never kills a run
 *   SIGXFSZ                  ignored: a write beyond the file-size limit fails with EFBIG and is
 *                            reported like any failed write
 * A second stop signal while the first is being honoured (the final step or
 * checkpoint can take long) leaves at once with EXIT_INTERRUPTED_TWICE,
 * removing the temporary file of the checkpoint in progress; once the final
 * state is on disk (signals_final_state_written), it leaves at once with
 * 128 + the first signal, as the run would have.
 */
enum { EXIT_INTERRUPTED_TWICE = 3 };

/* SIGUSR1 alone, first thing in main: its default action ends the process,
 * and one that reaches the ranks while MPI starts them (seconds on many nodes)
 * would end the job it asked to checkpoint. Noted from here on, it is
 * honoured after the run's first batch. (The stop signals keep their default
 * until signals_install: nothing is computed before it, and the benchmarks,
 * which never install it, must stay stoppable.) */
void signals_install_checkpoint_request(void);

void signals_install(void);

/* The stop signal received (SIGINT, SIGTERM or SIGHUP), or 0. */
int signals_stop_requested(void);

/* The run's final checkpoint is written: a second stop signal no longer means exit 3. */
void signals_final_state_written(void);

/* 1 once per SIGUSR1 received since the last call. */
int signals_take_checkpoint_request(void);
