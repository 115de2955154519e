/* The colour scheme and glyph sets of scheme.h. */
#include "scheme.h"

#include <curses.h>

static const struct {
	short fg, bg;
	int mono; /* attributes without colour */
	int extra; /* attributes added to the colour */
} scheme[TUI_LOOK__COUNT] = {
	[TUI_LOOK_NORMAL] = {-1, -1, A_NORMAL, 0},
	[TUI_LOOK_BADGE] = {COLOR_BLACK, COLOR_GREEN, A_REVERSE, A_BOLD},
	[TUI_LOOK_PAUSED] = {COLOR_BLACK, COLOR_YELLOW, A_REVERSE, A_BOLD},
	[TUI_LOOK_REC] = {COLOR_WHITE, COLOR_RED, A_REVERSE, A_BOLD},
	[TUI_LOOK_READ] = {COLOR_CYAN, -1, A_NORMAL, 0},
	[TUI_LOOK_WRITE] = {COLOR_MAGENTA, -1, A_NORMAL, 0},
	[TUI_LOOK_WARN] = {COLOR_YELLOW, -1, A_BOLD, A_BOLD},
	[TUI_LOOK_CRIT] = {COLOR_RED, -1, A_BOLD | A_UNDERLINE, A_BOLD},
	[TUI_LOOK_HEAD] = {COLOR_BLACK, COLOR_CYAN, A_REVERSE, 0},
	[TUI_LOOK_SELECTED] = {COLOR_BLACK, COLOR_WHITE, A_REVERSE, 0},
	[TUI_LOOK_KEY] = {COLOR_BLACK, COLOR_CYAN, A_REVERSE, 0},
	[TUI_LOOK_DIM] = {COLOR_BLUE, -1, A_DIM, A_BOLD},
	[TUI_LOOK_HEAT_LOW] = {COLOR_BLUE, -1, A_NORMAL, 0},
	[TUI_LOOK_HEAT_MID] = {COLOR_GREEN, -1, A_NORMAL, 0},
	[TUI_LOOK_HEAT_HIGH] = {COLOR_YELLOW, -1, A_BOLD, A_BOLD},
};

static bool have_color;

void tui_scheme_init(bool color)
{
	have_color = false;
	if (!color || !has_colors() || start_color() == ERR)
		return;
	use_default_colors();
	for (int i = 1; i < TUI_LOOK__COUNT; i++)
		init_pair((short)i, scheme[i].fg, scheme[i].bg);
	have_color = true;
}

int tui_look(enum tui_look l, bool color)
{
	if ((unsigned)l >= TUI_LOOK__COUNT)
		return A_NORMAL;
	if (color && have_color && l != TUI_LOOK_NORMAL)
		return (int)(COLOR_PAIR(l) | (chtype)scheme[l].extra);
	return scheme[l].mono;
}

static const struct tui_glyphs utf8 = {
	.spark = {"\u2581", "\u2582", "\u2583", "\u2584", "\u2585", "\u2586", "\u2587", "\u2588"},
	.heat = {" ", "\u2591", "\u2592", "\u2593", "\u2588"},
	.meter_fill = "\u25a0",
	.meter_empty = "\u00b7",
	.flag = "!",
	.sep = "\u2502",
};

static const struct tui_glyphs ascii = {
	.spark = {"_", ".", "-", "~", "=", "+", "*", "#"},
	.heat = {" ", ".", ":", "+", "#"},
	.meter_fill = "|",
	.meter_empty = ".",
	.flag = "!",
	.sep = "|",
};

const struct tui_glyphs *tui_glyphs(bool u)
{
	return u ? &utf8 : &ascii;
}
