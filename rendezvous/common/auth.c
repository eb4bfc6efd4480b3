/*
 * auth.c: shared-secret challenge-response (auth.h): token files, nonces
 * and HMAC-SHA256 proofs from OpenSSL's libcrypto.  libcrypto is loaded
 * with dlopen when a token is first used, not linked: mapping and
 * relocating it costs every agent ~1.5 MB of RSS, and most never
 * authenticate.
 */
#include <sys/stat.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "auth.h"
#include "errbuf.h"

static const char auth_labels[2][21] = { "cgrun-auth-v2 client",
	"cgrun-auth-v2 server" };

#define AUTH_LIBCRYPTO	"libcrypto.so.3"

/* The libcrypto functions used, typed from OpenSSL's own headers. */
static struct {
	void			*dl;
	__typeof__(HMAC)	*hmac;
	__typeof__(EVP_sha256)	*sha256;
	__typeof__(RAND_bytes)	*rand_bytes;
	__typeof__(CRYPTO_memcmp) *memcmp;
	char			 why[256];
} crypto;

/* Look up one symbol into a function pointer (no type punning). */
static int
auth_sym(const char *name, void *fp, size_t size)
{
	void *sym = dlsym(crypto.dl, name);

	memcpy(fp, &sym, size);
	return sym != NULL ? 0 : -1;
}

/* Load libcrypto once; 0, or -1 with crypto.why set. */
static int
auth_crypto(void)
{
	if (crypto.hmac != NULL)
		return 0;
	if (crypto.why[0] != '\0')
		return -1;
	if ((crypto.dl = dlopen(AUTH_LIBCRYPTO, RTLD_NOW | RTLD_LOCAL)) ==
	    NULL) {
		snprintf(crypto.why, sizeof(crypto.why), "cannot load %s "
		    "(OpenSSL 3, needed for authentication): %s",
		    AUTH_LIBCRYPTO, dlerror());
		return -1;
	}
	if (auth_sym("EVP_sha256", &crypto.sha256, sizeof(crypto.sha256)) ||
	    auth_sym("RAND_bytes", &crypto.rand_bytes,
	    sizeof(crypto.rand_bytes)) || auth_sym("CRYPTO_memcmp",
	    &crypto.memcmp, sizeof(crypto.memcmp)) || auth_sym("HMAC",
	    &crypto.hmac, sizeof(crypto.hmac))) {
		snprintf(crypto.why, sizeof(crypto.why), "%s lacks HMAC, "
		    "EVP_sha256, RAND_bytes or CRYPTO_memcmp", AUTH_LIBCRYPTO);
		crypto.hmac = NULL;
		dlclose(crypto.dl);
		crypto.dl = NULL;
		return -1;
	}
	return 0;
}

/* Refuse a token file others can read or change. */
static int
auth_check_mode(const struct stat *sb, const char *path, char *err,
    size_t errlen)
{
	if (!S_ISREG(sb->st_mode))
		return errbuf_set(err, errlen, "auth token file %s: not a "
		    "regular file", path);
	if (sb->st_mode & (S_IRWXO | S_IWGRP))
		return errbuf_set(err, errlen, "auth token file %s: "
		    "permissions %04o are too open (others may read or change "
		    "the secret); chmod 600 it", path,
		    (unsigned)(sb->st_mode & 07777));
	return 0;
}

/* Read the token file into k (see auth.h). */
int
auth_key_load(struct auth_key *k, const char *path, char *err, size_t errlen)
{
	struct stat sb;
	ssize_t n;
	size_t len = 0;
	int fd;

	memset(k, 0, sizeof *k);
	if (auth_crypto() == -1)
		return errbuf_set(err, errlen, "auth token file %s: %s", path,
		    crypto.why);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) == -1)
		return errbuf_set(err, errlen, "auth token file %s: %s", path,
		    strerror(errno));
	if (fstat(fd, &sb) == -1) {
		n = errno;
		close(fd);
		return errbuf_set(err, errlen, "auth token file %s: %s", path,
		    strerror((int)n));
	}
	if (auth_check_mode(&sb, path, err, errlen) == -1) {
		close(fd);
		return -1;
	}
	while (len < sizeof k->bytes &&
	    (n = read(fd, k->bytes + len, sizeof k->bytes - len)) != 0) {
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			close(fd);
			auth_key_clear(k);
			return errbuf_set(err, errlen, "auth token file %s: %s",
			    path, strerror(errno));
		}
		len += (size_t)n;
	}
	n = len == sizeof k->bytes ? read(fd, &sb, 1) : 0;
	close(fd);
	if (n > 0) {
		auth_key_clear(k);
		return errbuf_set(err, errlen, "auth token file %s: over %d "
		    "bytes", path, AUTH_TOKEN_MAX);
	}
	while (len > 0 && (k->bytes[len - 1] == '\n' ||
	    k->bytes[len - 1] == '\r' || k->bytes[len - 1] == ' ' ||
	    k->bytes[len - 1] == '\t'))
		len--;
	if (len < AUTH_TOKEN_MIN) {
		auth_key_clear(k);
		return errbuf_set(err, errlen, "auth token file %s: token of "
		    "%zu bytes, at least %d needed (e.g. openssl rand -hex 32)",
		    path, len, AUTH_TOKEN_MIN);
	}
	k->len = len;
	return 0;
}

/* Bytes as lowercase hex with a NUL. */
static void
auth_hex(const unsigned char *b, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = '\0';
}

/* A fresh random nonce as hex. */
int
auth_nonce(char out[AUTH_HEX_LEN + 1])
{
	unsigned char b[AUTH_NONCE_BYTES];

	if (auth_crypto() == -1 || crypto.rand_bytes(b, sizeof b) != 1)
		return -1;
	auth_hex(b, sizeof b, out);
	return 0;
}

/* 1 if s is exactly AUTH_HEX_LEN lowercase hex digits. */
static int
auth_is_hex(const char *s)
{
	size_t i;

	for (i = 0; i < AUTH_HEX_LEN; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' &&
		    s[i] <= 'f')))
			return 0;
	return s[AUTH_HEX_LEN] == '\0';
}

/* HMAC-SHA256(key, label NUL snonce NUL cnonce) as hex. */
int
auth_proof(const struct auth_key *k, int role, const char *snonce,
    const char *cnonce, char out[AUTH_HEX_LEN + 1])
{
	unsigned char msg[sizeof auth_labels[0] + 2 * (AUTH_HEX_LEN + 1)];
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	size_t off = 0;

	if ((role != AUTH_ROLE_CLIENT && role != AUTH_ROLE_SERVER) ||
	    !auth_is_hex(snonce) || !auth_is_hex(cnonce) || k->len == 0 ||
	    auth_crypto() == -1)
		return -1;
	memcpy(msg, auth_labels[role], sizeof auth_labels[role]);
	off += sizeof auth_labels[role];	/* with its NUL */
	memcpy(msg + off, snonce, AUTH_HEX_LEN + 1);
	off += AUTH_HEX_LEN + 1;
	memcpy(msg + off, cnonce, AUTH_HEX_LEN);
	off += AUTH_HEX_LEN;
	if (crypto.hmac(crypto.sha256(), k->bytes, (int)k->len, msg, off, md,
	    &mdlen) == NULL || mdlen != 32)
		return -1;
	auth_hex(md, mdlen, out);
	explicit_bzero(md, sizeof md);
	return 0;
}

/* 1 if got is role's proof over the nonces. */
int
auth_verify(const struct auth_key *k, int role, const char *snonce,
    const char *cnonce, const char *got)
{
	char want[AUTH_HEX_LEN + 1];
	int ok;

	if (got == NULL || strlen(got) != AUTH_HEX_LEN ||
	    auth_proof(k, role, snonce, cnonce, want) == -1)
		return 0;
	ok = crypto.memcmp(want, got, AUTH_HEX_LEN) == 0;
	explicit_bzero(want, sizeof want);
	return ok;
}

/* Wipe the key. */
void
auth_key_clear(struct auth_key *k)
{
	explicit_bzero(k, sizeof *k);
}
