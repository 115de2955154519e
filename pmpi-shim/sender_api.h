/* Internal: what the layers may ask of the sender (sender.c). */
#ifndef IOP_SHIM_SENDER_API_H
#define IOP_SHIM_SENDER_API_H

/* Sends what is pending now, waiting for the socket at most briefly. */
void shim_flush(void);

#endif
