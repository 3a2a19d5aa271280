#pragma once
/*
 * "Did you mean ...?" for the configuration's messages: the nearest of a
 * list of words to a misspelt one, by edit distance.
 */
#include <stddef.h>

/* Levenshtein distance of a and b; (size_t)-1 where b is longer than 127 characters. */
size_t words_edit_distance(const char *a, const char *b);

/* The candidate nearest to word (the first of equals); "" when count is 0.
 * The list ends at count or at its first NULL. */
const char *words_nearest(const char *word, const char *const *candidates, int count);
