#include "tuning_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The cache file's path into buf. */
static void tuning_cache_path(char *buf, size_t len)
{
    const char *explicit_path = getenv("HEATSOLVE_TUNING_CACHE"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (explicit_path && *explicit_path) snprintf(buf, len, "%s", explicit_path);
    else if (xdg && *xdg) snprintf(buf, len, "%s/heatsolve-tuning.txt", xdg);
    else snprintf(buf, len, "%s/.cache/heatsolve-tuning.txt", home && *home ? home : "/tmp");
}

/* Later lines win: a choice timed again (the cache was ignored or the
 * machine changed its mind) replaces the earlier one. */
int tuning_cache_lookup(const char *key, char *value, size_t len)
{
    char path[1024], line[512];
    size_t key_len = strlen(key);
    int found = 0;
    value[0] = '\0';
    tuning_cache_path(path, sizeof path);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, key_len) != 0 || line[key_len] != '\t') continue;
        line[strcspn(line, "\n")] = '\0';
        snprintf(value, len, "%s", line + key_len + 1);
        found = 1;
    }
    fclose(f);
    return found;
}

void tuning_cache_store(const char *key, const char *value)
{
    char path[1024];
    tuning_cache_path(path, sizeof path);
    FILE *f = fopen(path, "a");
    if (!f) return;
    fprintf(f, "%s\t%s\n", key, value);
    fclose(f);
}
