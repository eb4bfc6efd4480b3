/*
 * fuzz_etcd_json.c: libFuzzer target for the etcd v3 gateway answer parser
 * (launcher/backend/etcd/etcd_json.c): any bytes, as one answer; what it
 * accepts must respect the bounds of etcd_limits.h.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "etcd_json.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* One input: parse, check the bounds, free. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct etcd_reply r;
	char why[ETCD_JSON_ERRLEN];
	size_t i;

	if (etcd_json_parse((const char *)data, size, &r, why, sizeof(why)) !=
	    ETCD_JSON_OK)
		return 0;
	if (r.nkvs > ETCD_KVS_MAX)
		abort();
	for (i = 0; i < r.nkvs; i++)
		if (r.kvs[i].keylen > ETCD_KEY_MAX ||
		    r.kvs[i].vlen > ETCD_VALUE_MAX ||
		    strlen(r.kvs[i].key) > r.kvs[i].keylen)
			abort();
	etcd_reply_clear(&r);
	return 0;
}
