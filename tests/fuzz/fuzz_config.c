/* libFuzzer harness: the configuration loader with --set overrides.
 * Input: a config text, then optional override lines after a line "%%"
 * ("grid.n=[4,4,4]" ...). Any input must end in HEAT_OK or a clean error. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/config.h"
#include "solver/error.h"

enum { MAX_OVERRIDES = 16 };

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char *overrides[MAX_OVERRIDES];
    int count = 0;
    char *split = strstr(text, "\n%%\n");
    if (split) {
        *split = '\0';
        for (char *line = strtok(split + 4, "\n"); line && count < MAX_OVERRIDES; line = strtok(NULL, "\n"))
            overrides[count++] = line;
    }
    heat_config config;
    if (heat_config_load_string(text, "fuzz.cfg", overrides, count, &config) == HEAT_OK) {
        /* A configuration that loads must be usable: its effective text loads again. */
        heat_config again;
        if (heat_config_load_string(config.text, "effective", NULL, 0, &again) != HEAT_OK) abort();
        heat_config_destroy(&again);
    }
    heat_config_destroy(&config);
    free(text);
    return 0;
}
