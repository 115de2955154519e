/* Job keys and keyed MACs over libsodium. BLAKE2b keyed with the 16-byte job
 * key is a PRF, so a 16-byte tag authenticates a frame without a nonce; the
 * frame's (node, pid, sequence) lets receivers reject replays. */
#include <pthread.h>
#include <sodium.h>
#include <string.h>

#include "auth.h"

_Static_assert(IOP_KEY_BYTES >= crypto_generichash_KEYBYTES_MIN, "key too short");
_Static_assert(IOP_MAC_BYTES >= crypto_generichash_BYTES_MIN, "mac too short");

static pthread_once_t sodium_once = PTHREAD_ONCE_INIT;
static int sodium_status = -1;

static void sodium_start(void)
{
	sodium_status = sodium_init(); /* 0 first time, 1 if already done */
}

enum iop_err iop_auth_init(void)
{
	pthread_once(&sodium_once, sodium_start);
	return sodium_status < 0 ? IOP_ERR_CRYPTO : IOP_OK;
}

enum iop_err iop_key_generate(struct iop_key *key)
{
	enum iop_err e = iop_auth_init();
	if (e != IOP_OK)
		return e;
	randombytes_buf(key->b, sizeof key->b);
	return IOP_OK;
}

enum iop_err iop_key_from_hex(const char *hex, struct iop_key *key)
{
	size_t bin_len = 0;
	const char *end = NULL;
	if (!hex || strlen(hex) != IOP_KEY_HEX)
		return IOP_ERR_INVAL;
	if (sodium_hex2bin(key->b, sizeof key->b, hex, IOP_KEY_HEX, NULL, &bin_len, &end) != 0 ||
	    bin_len != IOP_KEY_BYTES || *end != '\0')
		return IOP_ERR_INVAL;
	return IOP_OK;
}

void iop_key_to_hex(const struct iop_key *key, char *out)
{
	sodium_bin2hex(out, IOP_KEY_HEX + 1, key->b, sizeof key->b);
}

enum iop_err iop_mac(const struct iop_key *key, const void *data, size_t len,
                     uint8_t mac[IOP_MAC_BYTES])
{
	enum iop_err e = iop_auth_init();
	if (e != IOP_OK)
		return e;
	if (crypto_generichash(mac, IOP_MAC_BYTES, data, len, key->b, IOP_KEY_BYTES) != 0)
		return IOP_ERR_CRYPTO;
	return IOP_OK;
}

bool iop_mac_ok(const struct iop_key *key, const void *data, size_t len,
                const uint8_t mac[IOP_MAC_BYTES])
{
	uint8_t want[IOP_MAC_BYTES];
	if (iop_mac(key, data, len, want) != IOP_OK)
		return false;
	return sodium_memcmp(want, mac, IOP_MAC_BYTES) == 0;
}
