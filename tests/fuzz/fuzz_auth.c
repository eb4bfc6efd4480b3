/*
 * fuzz_auth.c: libFuzzer target for rendezvous/auth.c: the auth token file
 * (auth_key_load: mode check, size limits, trailing white space) and the
 * nonces and proofs a peer sends (auth_proof, auth_verify).  auth.c reads
 * the token from a path, so each input's token is written to a file (in
 * /dev/shm when it can) with the mode the input chooses.  Input: one byte
 * for the mode and role, two for the token's length (little endian, cut
 * to what is there), the token, then the server nonce, a NUL, the client
 * nonce, a NUL, and the proof to verify.
 *
 * Checked beyond crashes, leaks and UB: a file others can read or change
 * is refused, as is a token shorter than AUTH_TOKEN_MIN or longer than
 * AUTH_TOKEN_MAX after trimming, always with a reason; an accepted key is
 * the file's bytes without trailing blanks; a proof exists exactly when
 * both nonces are AUTH_HEX_LEN lowercase hex digits, verifies for its own
 * role and not the other's; any other proof is refused.
 */
#include <sys/stat.h>

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auth.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* File modes tried: two accepted, three refused. */
static const mode_t fa_modes[] = { 0600, 0400, 0640, 0644, 0620 };
#define FA_NMODES	(sizeof(fa_modes) / sizeof(fa_modes[0]))

/* Abort (a finding) unless cond holds. */
static void
fa_assert(int cond)
{
	if (!cond)
		abort();
}

/* Write len bytes of p to path with mode (replacing the file). */
static void
fa_write(const char *path, const uint8_t *p, size_t len, mode_t mode)
{
	int fd;

	unlink(path);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    0600)) == -1)
		abort();
	if (len > 0 && write(fd, p, len) != (ssize_t)len)
		abort();
	if (fchmod(fd, mode) == -1)
		abort();
	close(fd);
}

/* The token's length once trailing blanks (\n \r space tab) are cut. */
static size_t
fa_trimmed(const uint8_t *p, size_t len)
{
	while (len > 0 && (p[len - 1] == '\n' || p[len - 1] == '\r' ||
	    p[len - 1] == ' ' || p[len - 1] == '\t'))
		len--;
	return len;
}

/* 1 if s is exactly AUTH_HEX_LEN lowercase hex digits. */
static int
fa_is_nonce(const char *s)
{
	size_t i;

	if (strlen(s) != AUTH_HEX_LEN)
		return 0;
	for (i = 0; i < AUTH_HEX_LEN; i++)
		if (strchr("0123456789abcdef", s[i]) == NULL)
			return 0;
	return 1;
}

/* auth_key_load's contract on one file; 0 when the key was loaded. */
static int
fa_load(struct auth_key *k, const char *path, const uint8_t *tok,
    size_t len, mode_t mode)
{
	size_t want = fa_trimmed(tok, len);
	char err[512];
	int rc;

	err[0] = '\0';
	rc = auth_key_load(k, path, err, sizeof(err));
	if ((mode & (S_IRWXO | S_IWGRP)) != 0 || len > AUTH_TOKEN_MAX ||
	    want < AUTH_TOKEN_MIN) {
		fa_assert(rc == -1 && err[0] != '\0' && k->len == 0);
		return -1;
	}
	if (rc == -1)	/* no libcrypto here: the reason is given */
		fa_assert(err[0] != '\0' && strstr(err, "libcrypto") != NULL);
	else
		fa_assert(k->len == want && memcmp(k->bytes, tok, want) == 0);
	return rc;
}

/* The proof contract over two nonces and a proof to check. */
static void
fa_proofs(const struct auth_key *k, int role, const char *sn,
    const char *cn, const char *got)
{
	char proof[AUTH_HEX_LEN + 1];
	int rc = auth_proof(k, role, sn, cn, proof);

	if (!fa_is_nonce(sn) || !fa_is_nonce(cn)) {
		fa_assert(rc == -1);
		fa_assert(auth_verify(k, role, sn, cn, got) == 0);
		return;
	}
	fa_assert(rc == 0 && fa_is_nonce(proof));
	fa_assert(auth_verify(k, role, sn, cn, proof) == 1);
	fa_assert(auth_verify(k, !role, sn, cn, proof) == 0);
	fa_assert(auth_verify(k, role, sn, cn, got) ==
	    (strcmp(got, proof) == 0));
}

/* Split the rest of the input into three NUL-terminated strings. */
static char *
fa_strings(const uint8_t *p, size_t len, const char **s)
{
	char *buf = calloc(1, len + 3), *q;
	int i;

	if (buf == NULL)
		abort();
	memcpy(buf, p, len);
	for (i = 0, q = buf; i < 3; i++) {
		s[i] = q;
		q += strlen(q) + (q < buf + len ? 1 : 0);
		if (q > buf + len)
			q = buf + len;
	}
	return buf;
}

/* libFuzzer entry: one token file and one exchange. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[64];
	struct auth_key k;
	const char *s[3];
	size_t len;
	mode_t mode;
	char *buf;
	int role;

	if (path[0] == '\0')
		snprintf(path, sizeof(path), "%s/cgrun-fuzz-auth.%ld",
		    access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp",
		    (long)getpid());
	if (size < 3)
		return 0;
	mode = fa_modes[(data[0] & 0x7f) % FA_NMODES];
	role = data[0] >> 7;
	len = (size_t)data[1] | (size_t)data[2] << 8;
	if (len > size - 3)
		len = size - 3;
	fa_write(path, data + 3, len, mode);
	if (fa_load(&k, path, data + 3, len, mode) == 0) {
		buf = fa_strings(data + 3 + len, size - 3 - len, s);
		fa_proofs(&k, role, s[0], s[1], s[2]);
		free(buf);
	}
	auth_key_clear(&k);
	return 0;
}
