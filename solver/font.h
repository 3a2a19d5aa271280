#pragma once
/*
 * heatsolve's own 5 x 7 bitmap font for the letters initial condition.
 * Glyph rows run top to bottom; bit 4 of a row is the leftmost column.
 */
enum { FONT_WIDTH = 5, FONT_HEIGHT = 7 };

/* Returns 1 where the glyph of `ch` has ink at (column, row), row 0 = top. */
int font_ink(char ch, int column, int row);

/* NULL when every character of text has a glyph, else a pointer to the first
 * one that has none. Lower-case letters are drawn as capitals. */
const char *font_unsupported(const char *text);
