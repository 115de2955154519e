/* Job keys and frame authentication. Each job has a random 128-bit key (kept
 * in the 0600 job card, passed to ranks through the environment as hex).
 * Frames and viewer requests carry a 128-bit keyed BLAKE2b MAC (libsodium's
 * crypto_generichash with a key), checked in constant time. */
#ifndef IOP_AUTH_H
#define IOP_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define IOP_KEY_BYTES 16
#define IOP_KEY_HEX   (2 * IOP_KEY_BYTES) /* hex digits, without the NUL */
#define IOP_MAC_BYTES 16

struct iop_key {
	uint8_t b[IOP_KEY_BYTES];
};

/* Initialises libsodium once (thread-safe); every other call here does it
 * too, so callers need not, but may to fail early. */
enum iop_err iop_auth_init(void);

/* A fresh random key. */
enum iop_err iop_key_generate(struct iop_key *key);

/* Exactly IOP_KEY_HEX hex digits -> key; INVAL on anything else. */
enum iop_err iop_key_from_hex(const char *hex, struct iop_key *key);

/* key -> IOP_KEY_HEX lower-case digits and a NUL; out has IOP_KEY_HEX + 1 bytes. */
void iop_key_to_hex(const struct iop_key *key, char *out);

/* mac = MAC(key, data[0..len)). */
enum iop_err iop_mac(const struct iop_key *key, const void *data, size_t len,
                     uint8_t mac[IOP_MAC_BYTES]);

/* True when mac is MAC(key, data); compares in constant time. */
bool iop_mac_ok(const struct iop_key *key, const void *data, size_t len,
                const uint8_t mac[IOP_MAC_BYTES]);

#endif
