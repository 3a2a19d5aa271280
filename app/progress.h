#pragma once
/*
 * Run feedback: on a terminal one line updated in place (step, simulated
 * time, percent, ETA, GLUP/s); otherwise plain log lines every 10% or 30 s.
 */
typedef struct heat_progress {
    long first_step, last_step; /* this run segment */
    double points;              /* owned points per step */
    double start;               /* wall clock at first_step (s) */
    double last_print;          /* wall clock of the last line (s) */
    long last_logged_decile;
    int tty, quiet;
} heat_progress;

double progress_now(void);
void progress_start(heat_progress *p, long first_step, long last_step, double points, int quiet);
void progress_update(heat_progress *p, long step, double time);
/* Ends the in-place line so that later output starts on a fresh line. */
void progress_finish(heat_progress *p);
