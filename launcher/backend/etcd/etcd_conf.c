/*
 * etcd_conf.c: --rdzv-conf of the etcd-v3 backend (etcd_conf.h): etcd's
 * own keys are taken here, every other key goes to the c10d backend's
 * parser (c10d_conf.c), so the shared keys mean the same in both.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errbuf.h"
#include "etcd_conf.h"
#include "options.h"

/* The first line of a password file. */
static int
conf_password_file(struct etcd_conf *cf, const char *path, char *err,
    size_t errlen)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (f == NULL || fgets(cf->password, sizeof(cf->password), f) == NULL) {
		errbuf_set(err, errlen, "--rdzv-conf password_file=%s: "
		    "%s", path,
		    f == NULL ? strerror(errno) : "empty");
		if (f != NULL)
			fclose(f);
		return -1;
	}
	fclose(f);
	n = strcspn(cf->password, "\r\n");
	cf->password[n] = '\0';
	return 0;
}

/* request_timeout: seconds (decimals allowed), 0.1 to 600. */
static int
conf_request_timeout(struct etcd_conf *cf, const char *v)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (errno != 0 || end == v || *end != '\0' || !(d >= 0.1) || d > 600)
		return -1;
	cf->request_ms = (uint32_t)(d * 1000 + 0.5);
	return 0;
}

/* Copy v into a field of len bytes; -1 if it does not fit or is empty. */
static int
conf_copy(char *dst, size_t len, const char *v)
{
	if (*v == '\0' || strlen(v) >= len)
		return -1;
	memcpy(dst, v, strlen(v) + 1);
	return 0;
}

/* One of etcd's keys: 0 taken, 1 not ours, -1 bad value (err set). */
static int
conf_apply(struct etcd_conf *cf, const char *k, const char *v, char *err,
    size_t errlen)
{
	int rc = 1;

	if (strcmp(k, "protocol") == 0)
		rc = strcmp(v, "https") == 0 ? (cf->https = 1, 0) :
		    strcmp(v, "http") == 0 ? (cf->https = 0, 0) : -1;
	else if (strcmp(k, "ca_cert") == 0 || strcmp(k, "cacert") == 0)
		rc = conf_copy(cf->cacert, sizeof(cf->cacert), v);
	else if (strcmp(k, "ssl_cert") == 0 || strcmp(k, "cert") == 0)
		rc = conf_copy(cf->cert, sizeof(cf->cert), v);
	else if (strcmp(k, "ssl_cert_key") == 0 || strcmp(k, "key") == 0)
		rc = conf_copy(cf->key, sizeof(cf->key), v);
	else if (strcmp(k, "user") == 0 || strcmp(k, "username") == 0)
		rc = conf_copy(cf->user, sizeof(cf->user), v);
	else if (strcmp(k, "password") == 0)
		rc = conf_copy(cf->password, sizeof(cf->password), v);
	else if (strcmp(k, "password_file") == 0)
		return conf_password_file(cf, v, err, errlen);
	else if (strcmp(k, "request_timeout") == 0)
		rc = conf_request_timeout(cf, v);
	if (rc == -1)
		errbuf_set(err, errlen, "--rdzv-conf %s=%s: not a valid "
		    "value", k,
		    strcmp(k, "password") == 0 ? "..." : v);
	return rc;
}

/* Parse --rdzv-conf for the etcd-v3 backend. */
int
etcd_conf_parse(const char *s, struct etcd_conf *cf, char *err,
    size_t errlen)
{
	char buf[OPTIONS_STR_MAX], rest[OPTIONS_STR_MAX] = "", *p, *tok, *eq;
	int rc;

	memset(cf, 0, sizeof(*cf));
	cf->request_ms = 5000;
	snprintf(buf, sizeof(buf), "%s", s ? s : "");
	for (p = buf; (tok = strsep(&p, ",")) != NULL;) {
		if ((eq = strchr(tok, '=')) == NULL) {
			if (*tok != '\0')	/* c10d_conf says what is wrong */
				snprintf(rest + strlen(rest), sizeof(rest) -
				    strlen(rest), ",%s", tok);
			continue;
		}
		*eq = '\0';
		if ((rc = conf_apply(cf, tok, eq + 1, err, errlen)) == -1)
			return -1;
		if (rc == 1)
			snprintf(rest + strlen(rest), sizeof(rest) -
			    strlen(rest), ",%s=%s", tok, eq + 1);
	}
	if (cf->cert[0] != '\0' && cf->key[0] == '\0') {
		errbuf_set(err, errlen, "--rdzv-conf ssl_cert needs "
		    "ssl_cert_key");
		return -1;
	}
	if (cf->password[0] != '\0' && cf->user[0] == '\0') {
		errbuf_set(err, errlen, "--rdzv-conf password needs user");
		return -1;
	}
	return c10d_conf_parse(rest[0] ? rest : NULL, &cf->c, err, errlen);
}
