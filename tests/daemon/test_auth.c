/*
 * test_auth.c: the shared-secret challenge-response (auth.c): proofs bound
 * to both nonces and the role, token files (permissions, length,
 * trimming), CIDR lists (acl.c), and the engine's version-2 handshake
 * driven through a fake connection: a client with the token gets
 * CHALLENGE, AUTHOK (whose proof it can check) and WELCOME; a wrong
 * token, a replayed AUTH, a v1 HELLO or a JOIN before AUTH get ERROR.
 */
#include <sys/stat.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "acl.h"
#include "auth.h"
#include "rdzv.h"
#include "helper_main.h"

#define SN "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
#define CN "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100"

/* A key from a string. */
static struct auth_key
key_of(const char *s)
{
	struct auth_key k;

	memset(&k, 0, sizeof k);
	k.len = strlen(s);
	memcpy(k.bytes, s, k.len);
	return k;
}

START_TEST(proof_roundtrip)
{
	struct auth_key k = key_of("correct horse battery staple");
	struct auth_key w = key_of("correct horse battery stapler");
	char p[AUTH_HEX_LEN + 1], q[AUTH_HEX_LEN + 1];

	ck_assert_int_eq(auth_proof(&k, AUTH_ROLE_CLIENT, SN, CN, p), 0);
	ck_assert_uint_eq(strlen(p), AUTH_HEX_LEN);
	ck_assert(auth_verify(&k, AUTH_ROLE_CLIENT, SN, CN, p));
	/* another key, another role, other nonces: no */
	ck_assert(!auth_verify(&w, AUTH_ROLE_CLIENT, SN, CN, p));
	ck_assert(!auth_verify(&k, AUTH_ROLE_SERVER, SN, CN, p));
	ck_assert(!auth_verify(&k, AUTH_ROLE_CLIENT, CN, SN, p));
	/* deterministic, and the server's proof differs from the client's */
	ck_assert_int_eq(auth_proof(&k, AUTH_ROLE_CLIENT, SN, CN, q), 0);
	ck_assert_str_eq(p, q);
	ck_assert_int_eq(auth_proof(&k, AUTH_ROLE_SERVER, SN, CN, q), 0);
	ck_assert_str_ne(p, q);
	/* one flipped digit, a short or an empty proof */
	q[0] = p[0] == '0' ? '1' : '0';
	memcpy(q + 1, p + 1, AUTH_HEX_LEN);
	ck_assert(!auth_verify(&k, AUTH_ROLE_CLIENT, SN, CN, q));
	p[AUTH_HEX_LEN - 1] = '\0';
	ck_assert(!auth_verify(&k, AUTH_ROLE_CLIENT, SN, CN, p));
	ck_assert(!auth_verify(&k, AUTH_ROLE_CLIENT, SN, CN, ""));
	/* nonces must be 64 lowercase hex digits */
	ck_assert_int_eq(auth_proof(&k, AUTH_ROLE_CLIENT, "abc", CN, p), -1);
	ck_assert_int_eq(auth_proof(&k, AUTH_ROLE_CLIENT, SN,
	    "FFEEDDCCBBAA99887766554433221100FFEEDDCCBBAA99887766554433221100",
	    p), -1);
}
END_TEST

/* The proof is HMAC-SHA256(token, "cgrun-auth-v2 client" NUL snonce NUL
 * cnonce) as docs/protocol.md says: the value below comes from Python's
 * hmac module, independently of OpenSSL's API use here. */
#define KNOWN_CLIENT_PROOF \
	"ac4ea0e8cca5ab58e58d393edb41e1a4adb6eff9b337e1dbfacf1eae09551e14"
START_TEST(proof_known_value)
{
	struct auth_key k = key_of("0123456789abcdef-test-token");
	char p[AUTH_HEX_LEN + 1];

	ck_assert_int_eq(auth_proof(&k, AUTH_ROLE_CLIENT, SN, CN, p), 0);
	ck_assert_str_eq(p, KNOWN_CLIENT_PROOF);
}
END_TEST

START_TEST(nonces_fresh)
{
	char a[AUTH_HEX_LEN + 1], b[AUTH_HEX_LEN + 1];

	ck_assert_int_eq(auth_nonce(a), 0);
	ck_assert_int_eq(auth_nonce(b), 0);
	ck_assert_uint_eq(strlen(a), AUTH_HEX_LEN);
	ck_assert_str_ne(a, b);
}
END_TEST

/* Write s to a temporary file of mode; its path in path. */
static void
token_file(char *path, size_t len, const char *s, mode_t mode)
{
	int fd;

	snprintf(path, len, "/tmp/cgrun-test-auth.XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, s, strlen(s)), (ssize_t)strlen(s));
	ck_assert_int_eq(fchmod(fd, mode), 0);
	close(fd);
}

START_TEST(token_files)
{
	struct auth_key k;
	char path[64], err[256];

	token_file(path, sizeof path, "0123456789abcdef0123\n", 0600);
	ck_assert_int_eq(auth_key_load(&k, path, err, sizeof err), 0);
	ck_assert_uint_eq(k.len, 20);	/* newline trimmed */
	ck_assert_int_eq(memcmp(k.bytes, "0123456789abcdef0123", 20), 0);
	chmod(path, 0640);		/* group may read */
	ck_assert_int_eq(auth_key_load(&k, path, err, sizeof err), 0);
	chmod(path, 0644);		/* world-readable: refused */
	err[0] = '\0';
	ck_assert_int_eq(auth_key_load(&k, path, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "too open") != NULL, "%s", err);
	ck_assert_msg(strstr(err, "0644") != NULL, "%s", err);
	chmod(path, 0620);		/* group-writable: refused */
	ck_assert_int_eq(auth_key_load(&k, path, err, sizeof err), -1);
	unlink(path);
	token_file(path, sizeof path, "short\n", 0600);
	ck_assert_int_eq(auth_key_load(&k, path, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "at least 16") != NULL, "%s", err);
	unlink(path);
	ck_assert_int_eq(auth_key_load(&k, path, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "No such file") != NULL, "%s", err);
	ck_assert_int_eq(auth_key_load(&k, "/tmp", err, sizeof err), -1);
}
END_TEST

/* A sockaddr for an IPv4 or IPv6 text address. */
static int
acl_has(const struct acl *a, const char *addr)
{
	struct sockaddr_in s4;
	struct sockaddr_in6 s6;

	memset(&s4, 0, sizeof s4);
	memset(&s6, 0, sizeof s6);
	if (inet_pton(AF_INET, addr, &s4.sin_addr) == 1) {
		s4.sin_family = AF_INET;
		return acl_match(a, (struct sockaddr *)&s4, sizeof s4);
	}
	ck_assert_int_eq(inet_pton(AF_INET6, addr, &s6.sin6_addr), 1);
	s6.sin6_family = AF_INET6;
	return acl_match(a, (struct sockaddr *)&s6, sizeof s6);
}

START_TEST(acl_lists)
{
	struct acl a;
	char err[256];

	ck_assert_int_eq(acl_parse(&a, "127.0.0.1, 10.1.0.0/16,fd00::/8",
	    err, sizeof err), 0);
	ck_assert_uint_eq(a.n, 3);
	ck_assert(acl_has(&a, "127.0.0.1"));
	ck_assert(!acl_has(&a, "127.0.0.2"));
	ck_assert(acl_has(&a, "10.1.255.3"));
	ck_assert(!acl_has(&a, "10.2.0.1"));
	ck_assert(acl_has(&a, "fd12::1"));
	ck_assert(!acl_has(&a, "fe80::1"));
	ck_assert(acl_has(&a, "::ffff:10.1.2.3"));	/* v4-mapped */
	ck_assert(!acl_has(&a, "::ffff:10.2.2.3"));
	ck_assert_int_eq(acl_parse(&a, "10.0.0.0/9", err, sizeof err), 0);
	ck_assert(acl_has(&a, "10.127.0.1"));
	ck_assert(!acl_has(&a, "10.128.0.1"));
	ck_assert_int_eq(acl_parse(&a, "0.0.0.0/0", err, sizeof err), 0);
	ck_assert(acl_has(&a, "192.0.2.1"));
	ck_assert(!acl_has(&a, "2001:db8::1"));
	ck_assert_int_eq(acl_parse(&a, "10.0.0.0/33", err, sizeof err), -1);
	ck_assert_int_eq(acl_parse(&a, "10.0.0.0/", err, sizeof err), -1);
	ck_assert_int_eq(acl_parse(&a, "10.0.0.0/-1", err, sizeof err), -1);
	ck_assert_int_eq(acl_parse(&a, "host.example", err, sizeof err), -1);
	ck_assert_msg(strstr(err, "host.example") != NULL, "%s", err);
	ck_assert_int_eq(acl_parse(&a, "127.0.0.1,", err, sizeof err), -1);
	ck_assert_int_eq(acl_parse(&a, "", err, sizeof err), -1);
}
END_TEST

/* ---- the engine's handshake through a fake connection ---- */

#define MAXMSG 16

struct fconn {
	struct rdzv_peer *peer;
	struct rdzv_msg	 msgs[MAXMSG];
	int		 n;
};

/* Fake transport: record the message. */
static void
fake_send(void *conn, const struct rdzv_msg *m, void *arg)
{
	struct fconn *c = conn;

	(void)arg;
	ck_assert_int_lt(c->n, MAXMSG);
	c->msgs[c->n++] = *m;
}

static const struct rdzv_io fake_io = { fake_send, NULL };
static struct event_base *base;
static struct rdzv *eng;
static struct auth_key skey;

/* An engine that requires the token. */
static void
setup(void)
{
	base = event_base_new();
	eng = rdzv_new(base, &fake_io, NULL);
	skey = key_of("the server's shared token 0123456789");
	ck_assert_int_eq(rdzv_set_auth(eng, &skey), 0);
}

/* Free it. */
static void
teardown(void)
{
	rdzv_free(eng);
	event_base_free(base);
}

/* Send HELLO(version) on a new fake connection; rc in *rc. */
static struct fconn *
hello(uint16_t version, int *rc)
{
	struct fconn *c = calloc(1, sizeof *c);
	struct rdzv_msg m;

	c->peer = rdzv_peer_new(eng, c);
	rdzv_proto_init(&m, RDZV_OP_HELLO);
	m.version = version;
	*rc = rdzv_peer_msg(c->peer, &m);
	return c;
}

/* Forget a fake connection. */
static void
bye(struct fconn *c)
{
	rdzv_peer_gone(c->peer);
	free(c);
}

/* AUTH with nonce and the proof of key over (snonce, nonce). */
static int
send_auth(struct fconn *c, const struct auth_key *k, const char *snonce,
    struct rdzv_msg *sent)
{
	rdzv_proto_init(sent, RDZV_OP_AUTH);
	snprintf(sent->nonce, sizeof sent->nonce, "%s", CN);
	ck_assert_int_eq(auth_proof(k, AUTH_ROLE_CLIENT, snonce, CN,
	    sent->proof), 0);
	return rdzv_peer_msg(c->peer, sent);
}

START_TEST(engine_handshake)
{
	struct rdzv_msg a, j;
	struct fconn *c;
	int rc;

	c = hello(RDZV_PROTO_VERSION_AUTH, &rc);
	ck_assert_int_eq(rc, 0);
	ck_assert_int_eq(c->n, 1);
	ck_assert_int_eq(c->msgs[0].op, RDZV_OP_CHALLENGE);
	ck_assert_uint_eq(strlen(c->msgs[0].nonce), AUTH_HEX_LEN);
	ck_assert_int_eq(send_auth(c, &skey, c->msgs[0].nonce, &a), 0);
	ck_assert_int_eq(c->n, 3);
	ck_assert_int_eq(c->msgs[1].op, RDZV_OP_AUTHOK);
	/* the server proves it knows the token, for these nonces */
	ck_assert(auth_verify(&skey, AUTH_ROLE_SERVER, c->msgs[0].nonce, CN,
	    c->msgs[1].proof));
	ck_assert_int_eq(c->msgs[2].op, RDZV_OP_WELCOME);
	/* the version this server speaks: 2 (asked), SPENT and RESUME */
	ck_assert_int_eq(c->msgs[2].version, RDZV_PROTO_VERSION_RESUME);
	/* and rendezvous operations work from now on */
	rdzv_proto_init(&j, RDZV_OP_KEEPALIVE);
	ck_assert_int_eq(rdzv_peer_msg(c->peer, &j), -1);	/* before JOIN */
	bye(c);
}
END_TEST

START_TEST(engine_refusals)
{
	struct auth_key wrong = key_of("not the server's token 0123456789");
	struct rdzv_msg a, j;
	struct rdzv_stats st;
	struct fconn *c, *d;
	int rc;

	/* a wrong token */
	c = hello(RDZV_PROTO_VERSION_AUTH, &rc);
	ck_assert_int_eq(send_auth(c, &wrong, c->msgs[0].nonce, &a), -1);
	ck_assert_int_eq(c->msgs[c->n - 1].op, RDZV_OP_ERROR);
	ck_assert_msg(strstr(c->msgs[c->n - 1].text, "authentication failed")
	    != NULL, "%s", c->msgs[c->n - 1].text);
	bye(c);
	/* a recorded good AUTH replayed on a new connection (new nonce) */
	c = hello(RDZV_PROTO_VERSION_AUTH, &rc);
	ck_assert_int_eq(send_auth(c, &skey, c->msgs[0].nonce, &a), 0);
	d = hello(RDZV_PROTO_VERSION_AUTH, &rc);
	ck_assert_str_ne(c->msgs[0].nonce, d->msgs[0].nonce);
	ck_assert_int_eq(rdzv_peer_msg(d->peer, &a), -1);
	ck_assert_int_eq(d->msgs[d->n - 1].op, RDZV_OP_ERROR);
	bye(c);
	bye(d);
	/* no authentication (version 1) */
	c = hello(RDZV_PROTO_VERSION, &rc);
	ck_assert_int_eq(rc, -1);
	ck_assert_int_eq(c->msgs[0].op, RDZV_OP_ERROR);
	ck_assert_msg(strstr(c->msgs[0].text, "authentication required")
	    != NULL, "%s", c->msgs[0].text);
	bye(c);
	/* a JOIN instead of AUTH */
	c = hello(RDZV_PROTO_VERSION_AUTH, &rc);
	rdzv_proto_init(&j, RDZV_OP_JOIN);
	ck_assert_int_eq(rdzv_peer_msg(c->peer, &j), -1);
	ck_assert_int_eq(c->msgs[c->n - 1].op, RDZV_OP_ERROR);
	bye(c);
	rdzv_stats(eng, &st);
	ck_assert_uint_eq(st.auth_failures, 2);
	ck_assert_uint_eq(st.jobs_created, 0);
}
END_TEST

START_TEST(engine_without_token)
{
	struct fconn *c;
	int rc;

	ck_assert_int_eq(rdzv_set_auth(eng, NULL), 0);
	c = hello(RDZV_PROTO_VERSION_AUTH, &rc);	/* client wants auth */
	ck_assert_int_eq(rc, -1);
	ck_assert_int_eq(c->msgs[0].op, RDZV_OP_ERROR);
	ck_assert_msg(strstr(c->msgs[0].text, "no --auth-token-file") != NULL,
	    "%s", c->msgs[0].text);
	bye(c);
	c = hello(RDZV_PROTO_VERSION, &rc);		/* version 1 as before */
	ck_assert_int_eq(rc, 0);
	ck_assert_int_eq(c->msgs[0].op, RDZV_OP_WELCOME);
	bye(c);
}
END_TEST

/* The suite. */
Suite *
test_suite(void)
{
	Suite *s = suite_create("auth");
	TCase *tc = tcase_create("auth");

	tcase_add_test(tc, proof_roundtrip);
	tcase_add_test(tc, proof_known_value);
	tcase_add_test(tc, nonces_fresh);
	tcase_add_test(tc, token_files);
	tcase_add_test(tc, acl_lists);
	suite_add_tcase(s, tc);
	tc = tcase_create("engine");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, engine_handshake);
	tcase_add_test(tc, engine_refusals);
	tcase_add_test(tc, engine_without_token);
	suite_add_tcase(s, tc);
	return s;
}
