#pragma once
/*
 * The tuning cache: what a backend chose by timing at start-up, kept for the
 * next run on the same machine and problem, so that it need not time again.
 * A text file, one line per choice: "<key>\t<value>\n", where the key is the
 * machine and the problem in tab-separated fields (each backend writes its
 * own) and the value is the choice. The file is HEATSOLVE_TUNING_CACHE, else
 * $XDG_CACHE_HOME/heatsolve-tuning.txt, else ~/.cache/heatsolve-tuning.txt.
 * It is a cache: a missing, unreadable or unwritable file only means timing
 * again, and a line that does not parse is ignored.
 */
#include <stddef.h>

/* The value stored last under key (without its newline) into value; returns
 * 1 when there is one, else 0 (value then holds ""). */
int tuning_cache_lookup(const char *key, char *value, size_t len);

/* Appends "key\tvalue\n"; a failure is silent (see above). */
void tuning_cache_store(const char *key, const char *value);
