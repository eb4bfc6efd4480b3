/*
 * etcd_json.h: bounded parsers of the etcd v3 JSON gateway's answers
 * (etcd_json.c), pure functions over a buffer, and the base64 helpers keys
 * and values travel in.  The gateway writes int64 fields as strings
 * ("revision":"12") and leaves false/zero fields out; both spellings of a
 * number are accepted, absent fields read as 0.
 */
#ifndef CGRUN_ETCD_JSON_H
#define CGRUN_ETCD_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "etcd_limits.h"

struct etcd_kv {
	char		 key[ETCD_KEY_MAX + 1];	/* decoded, NUL-terminated */
	size_t		 keylen;
	char		*value;		/* decoded, NUL-terminated (malloc) */
	size_t		 vlen;
	int64_t		 create_rev, mod_rev, lease;
	int		 deleted;	/* a watch event of type DELETE */
};

struct etcd_reply {
	int64_t		 revision;	/* header.revision */
	int		 code;		/* gRPC status of an error answer */
	char		 message[ETCD_MSG_MAX];
	int		 succeeded;	/* txn */
	int64_t		 lease_id, ttl;	/* lease grant / keep-alive */
	char		 token[ETCD_TOKEN_MAX + 1];	/* auth */
	struct etcd_kv	*kvs;		/* range, txn's first range, events */
	size_t		 nkvs;
	int		 created, canceled;	/* watch */
	int64_t		 compact_revision;	/* watch canceled: compacted */
};

enum { ETCD_JSON_OK = 0, ETCD_JSON_ERROR = -1 /* errbuf_set()'s */ };

/*
 * Parse one answer of len bytes (not NUL-terminated) into r (cleared
 * first; free with etcd_reply_clear).  A {"result":...} wrapper (streams)
 * is unwrapped; an {"error":...} answer sets code and message and is OK.
 * ERROR with err set: too long, malformed, too deep, a field out of its
 * bounds, bad base64.
 */
int	etcd_json_parse(const char *buf, size_t len, struct etcd_reply *r,
	    char *err, size_t errlen);
#define ETCD_JSON_ERRLEN	128	/* room for every parse error */
void	etcd_reply_clear(struct etcd_reply *);

/* base64 of n bytes into dst (dstlen >= 4 * ((n + 2) / 3) + 1); -1 if short. */
int	etcd_b64(char *dst, size_t dstlen, const void *src, size_t n);
/* Decode base64 src into dst (at most max bytes, then NUL); length or -1. */
long	etcd_unb64(char *dst, size_t max, const char *src, size_t n);

#endif
