/* The replay source (source.h): a recording played back into the
 * dashboard. pump() applies the DELTA frames when they are due at the
 * playback speed (its fd is a timer armed for the next one), seek() builds
 * the state at a tick from the nearest KEYFRAME (coll_rec_state_at) or,
 * a short way forward, applies the DELTAs in between. The alerts are those
 * the recording holds (its ALERT frames, as the live dashboard had them),
 * every one of them, so `n` can find the next; the views show those
 * started by the tick shown. With follow, a recording still being written
 * is read as it grows. */
#ifndef TUI_SOURCE_REPLAY_H
#define TUI_SOURCE_REPLAY_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"
#include "source.h"

/* Opens path and shows its first tick, playing at 1x. On failure why holds
 * a sentence for the user ("x.iop: not an iopulse recording (.iop)"). */
enum iop_err tui_source_replay_open(struct tui_source *src, const char *path, bool follow,
                                    char *why, size_t len);

#endif
