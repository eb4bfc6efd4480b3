/*
 * etcd_conf.h: --rdzv-conf of the etcd-v3 backend (etcd_conf.c): the
 * c10d backend's keys (join_timeout, last_call_timeout, close_timeout,
 * keep_alive_interval, keep_alive_max_attempt, read_timeout; parsed by
 * c10d_conf.c, same defaults) plus etcd's own:
 *
 *   protocol=http|https        scheme of members given as HOST:PORT
 *   ca_cert=FILE (cacert)      CA bundle that signed the members' certs
 *   ssl_cert=FILE (cert)       client certificate (etcd --client-cert-auth)
 *   ssl_cert_key=FILE (key)    its private key
 *   user=NAME (username)       etcd user (etcd auth enabled)
 *   password=PW                its password, or
 *   password_file=FILE         the first line of FILE
 *   request_timeout=SECONDS    one try of one request to one member, 5
 */
#ifndef CGRUN_ETCD_CONF_H
#define CGRUN_ETCD_CONF_H

#include <stddef.h>
#include <stdint.h>

#include "c10d_conf.h"
#include "etcd_limits.h"

struct etcd_conf {
	struct c10d_conf c;
	int		 https;
	char		 cacert[ETCD_PATH_MAX];
	char		 cert[ETCD_PATH_MAX];
	char		 key[ETCD_PATH_MAX];
	char		 user[ETCD_CRED_MAX + 1];
	char		 password[ETCD_CRED_MAX + 1];
	uint32_t	 request_ms;
};

/* Parse "k=v,k=v" (NULL: defaults); -1 with err on a bad value. */
int	etcd_conf_parse(const char *, struct etcd_conf *, char *err,
	    size_t errlen);

#endif /* CGRUN_ETCD_CONF_H */
