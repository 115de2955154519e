/* Logging that can never re-enter the shim's wrappers: messages are
 * formatted on the stack (vsnprintf does no I/O) and written with the raw
 * write system call, never through write(), stdio or any other function the
 * shim intercepts. errno is preserved. Safe from any thread; one message is
 * one write, so lines from threads do not interleave mid-line.
 *
 * Level from IOPULSE_LOG (error, warn, info, debug; default warn), read by
 * iop_log_init() or on first use. Output goes to fd 2 unless iop_log_set_fd()
 * says otherwise. */
#ifndef IOP_LOG_H
#define IOP_LOG_H

enum iop_log_level { IOP_LOG_ERROR, IOP_LOG_WARN, IOP_LOG_INFO, IOP_LOG_DEBUG };

#define IOP_LOG_LINE_MAX 512 /* longer messages are cut, ending in "..." */

void iop_log_init(void);
void iop_log_set_level(enum iop_log_level level);
enum iop_log_level iop_log_get_level(void);
void iop_log_set_fd(int fd);
/* Prefix of every line, e.g. "iopulse-shim"; copied, up to 31 bytes. */
void iop_log_set_prefix(const char *prefix);

void iop_log(enum iop_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define iop_error(...) iop_log(IOP_LOG_ERROR, __VA_ARGS__)
#define iop_warn(...)  iop_log(IOP_LOG_WARN, __VA_ARGS__)
#define iop_info(...)  iop_log(IOP_LOG_INFO, __VA_ARGS__)
#define iop_debug(...) iop_log(IOP_LOG_DEBUG, __VA_ARGS__)

#endif
