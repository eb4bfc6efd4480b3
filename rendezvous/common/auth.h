/*
 * auth.h: the shared-secret challenge-response of the native rendezvous
 * protocol, version 2 (docs/protocol.md section 7).  Both sides know a
 * token (--auth-token-file); neither sends it.  The server sends a fresh
 * random nonce, the client answers with its own nonce and
 * HMAC-SHA256(token, "cgrun-auth-v2 client" NUL snonce NUL cnonce), the
 * server answers with the same HMAC over "cgrun-auth-v2 server": each
 * proof is bound to this connection's two nonces, so a recorded proof is
 * worthless on another connection.  Nonces and proofs travel as lowercase
 * hex text.  Pure functions over caller buffers; nothing here logs.
 */
#ifndef CGRUN_AUTH_H
#define CGRUN_AUTH_H

#include <stddef.h>

#define AUTH_NONCE_BYTES	32
#define AUTH_HEX_LEN		64	/* nonce or proof as hex, without NUL */
#define AUTH_TOKEN_MIN		16	/* bytes of a usable token */
#define AUTH_TOKEN_MAX		1024

#define AUTH_ROLE_CLIENT	0
#define AUTH_ROLE_SERVER	1

struct auth_key {
	unsigned char	bytes[AUTH_TOKEN_MAX];
	size_t		len;
};

/*
 * Read the token from path: refused if the file is readable or writable
 * by others or writable by its group (like ssh's private keys), empty
 * after trimming the trailing white space, shorter than AUTH_TOKEN_MIN or
 * longer than AUTH_TOKEN_MAX.  0, or -1 with the reason in err.
 */
int	auth_key_load(struct auth_key *, const char *path, char *err,
	    size_t errlen);

/* A fresh random nonce as AUTH_HEX_LEN hex digits and a NUL; -1 if the
 * random generator failed. */
int	auth_nonce(char out[AUTH_HEX_LEN + 1]);

/* The proof of role over the two nonces, as hex; -1 on a bad nonce. */
int	auth_proof(const struct auth_key *, int role, const char *snonce,
	    const char *cnonce, char out[AUTH_HEX_LEN + 1]);

/* 1 if got is role's proof over the nonces (constant-time compare). */
int	auth_verify(const struct auth_key *, int role, const char *snonce,
	    const char *cnonce, const char *got);

/* Wipe the key. */
void	auth_key_clear(struct auth_key *);

#endif /* CGRUN_AUTH_H */
