/*
 * gpu_driver.c: a GPU's UUID from the NVIDIA driver's
 * /proc/driver/nvidia/gpus/<bus id>/information: one small read per GPU
 * where NVML's initialisation costs tens of ms and megabytes.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gpu_driver.h"

#define UUID_TAG	"GPU UUID:"

/* Whether [s, s+len) is a "GPU-" UUID: hex digits and dashes only. */
static int
gpu_driver_uuid_ok(const char *s, size_t len)
{
	size_t i, hex = 0;

	if (len <= 4 || strncmp(s, "GPU-", 4) != 0)
		return 0;
	for (i = 4; i < len; i++) {
		if (strchr("0123456789abcdefABCDEF", s[i]) != NULL && s[i])
			hex++;
		else if (s[i] != '-')
			return 0;
	}
	return hex > 0;
}

/* Contract: text is untrusted, len bytes, read only within them. */
int
gpu_driver_uuid_parse(const char *text, size_t len, char *uuid,
    size_t uuidlen)
{
	const char *p = text, *end = text + len, *nl, *v;
	size_t taglen = strlen(UUID_TAG), vlen;

	for (; p < end; p = nl + 1) {
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			nl = end;
		if ((size_t)(nl - p) < taglen || memcmp(p, UUID_TAG, taglen))
			continue;
		for (v = p + taglen; v < nl && (*v == ' ' || *v == '\t'); v++)
			;
		for (vlen = (size_t)(nl - v); vlen > 0 && (v[vlen - 1] ==
		    ' ' || v[vlen - 1] == '\t' || v[vlen - 1] == '\r'); vlen--)
			;
		if (!gpu_driver_uuid_ok(v, vlen) || vlen >= uuidlen)
			return -1;
		memcpy(uuid, v, vlen);
		uuid[vlen] = '\0';
		return 0;
	}
	return -1;
}

/* A GPU's UUID from the driver's information file; 0 or -1. */
int
gpu_driver_uuid(const char *root, const char *busid, char *uuid,
    size_t uuidlen)
{
	char path[512], buf[GPU_DRIVER_INFO_MAX];
	ssize_t n;
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s/information", root,
	    busid) >= sizeof(path) || (fd = open(path, O_RDONLY |
	    O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	return n > 0 ? gpu_driver_uuid_parse(buf, (size_t)n, uuid, uuidlen) :
	    -1;
}
