/*
 * etcd_limits.h: every named maximum of cgrun's etcd client (the etcd v3
 * JSON gateway answers are untrusted bytes: each is checked against these
 * before anything is allocated or copied).
 */
#ifndef CGRUN_ETCD_LIMITS_H
#define CGRUN_ETCD_LIMITS_H

#define ETCD_BODY_MAX		(1024 * 1024)	/* one answer, bytes */
#define ETCD_JSON_DEPTH		16	/* nesting of an answer */
#define ETCD_KVS_MAX		4096	/* key-values in one answer */
#define ETCD_KEY_MAX		512	/* one key, decoded bytes */
#define ETCD_VALUE_MAX		(64 * 1024)	/* one value, decoded bytes */
#define ETCD_MSG_MAX		256	/* an error message kept */
#define ETCD_TOKEN_MAX		512	/* an auth token */
#define ETCD_ENDPOINTS_MAX	16	/* members in --rdzv-endpoint */
#define ETCD_URL_MAX		512	/* one member's base URL */
#define ETCD_PATH_MAX		1024	/* a file named in --rdzv-conf */
#define ETCD_CRED_MAX		256	/* user name, password */

#endif
