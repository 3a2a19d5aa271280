#include "words.h"

#include <string.h>

enum { LONGEST_WORD = 127 };

size_t words_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), row[LONGEST_WORD + 1];
    if (lb > LONGEST_WORD) return (size_t)-1;
    for (size_t j = 0; j <= lb; ++j) row[j] = j;
    for (size_t i = 1; i <= la; ++i) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; ++j) {
            size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            diag = up;
            row[j] = best;
        }
    }
    return row[lb];
}

const char *words_nearest(const char *word, const char *const *candidates, int count)
{
    const char *best = count > 0 && candidates[0] ? candidates[0] : "";
    size_t best_distance = (size_t)-1;
    for (int i = 0; i < count && candidates[i]; ++i) {
        size_t d = words_edit_distance(word, candidates[i]);
        if (d < best_distance) best_distance = d, best = candidates[i];
    }
    return best;
}
