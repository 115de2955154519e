/* Colours by meaning and the glyphs of the two character sets (htop's
 * CRT.c): no other file names a raw colour or a box-drawing character.
 * Every colour has a word or glyph beside it, so NO_COLOR, `x` and
 * monochrome terminals lose nothing but the colour. */
#ifndef TUI_SCHEME_H
#define TUI_SCHEME_H

#include <stdbool.h>

enum tui_look {
	TUI_LOOK_NORMAL,
	TUI_LOOK_BADGE,     /* LIVE */
	TUI_LOOK_PAUSED,    /* PAUSED badge */
	TUI_LOOK_REC,       /* REC badge */
	TUI_LOOK_READ,      /* read rates, meters */
	TUI_LOOK_WRITE,     /* write rates, meters */
	TUI_LOOK_WARN,      /* WARN alerts */
	TUI_LOOK_CRIT,      /* CRIT alerts, flagged cells */
	TUI_LOOK_HEAD,      /* table header */
	TUI_LOOK_SELECTED,  /* selected row */
	TUI_LOOK_KEY,       /* key in the hint bar */
	TUI_LOOK_DIM,       /* secondary text */
	TUI_LOOK_HEAT_LOW,
	TUI_LOOK_HEAT_MID,
	TUI_LOOK_HEAT_HIGH,
	TUI_LOOK__COUNT
};

/* Sets up the colour pairs when colour is wanted and available. */
void tui_scheme_init(bool color);
/* Attributes (chtype attributes) of a look, with or without colour. */
int tui_look(enum tui_look l, bool color);

struct tui_glyphs {
	const char *spark[8]; /* lowest to highest */
	const char *heat[5];  /* empty to full */
	const char *meter_fill, *meter_empty;
	const char *flag;     /* a flagged heatmap cell */
	const char *sep;      /* vertical separator */
};
const struct tui_glyphs *tui_glyphs(bool utf8);

#endif
