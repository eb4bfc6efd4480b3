/*
 * gpu_visible.c: the GPUs as CUDA numbers them (gpu.h): CUDA's device
 * order (CUDA_DEVICE_ORDER: PCI bus id, or fastest first), and
 * CUDA_VISIBLE_DEVICES, parsed and applied exactly as the CUDA runtime
 * does (indices, GPU-/MIG- UUIDs and unique prefixes; the list ends at
 * the first invalid, out-of-range or repeated entry), so that local rank
 * k and cuda:k agree.  Pure functions over a list that gpu_scan.c found.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "errbuf.h"
#include "gpu.h"
#include "log.h"

/* Compare two GPUs by PCI bus id. */
static int
gpu_cmp_bus(const struct gpu_info *a, const struct gpu_info *b)
{
	if (a->domain != b->domain)
		return a->domain < b->domain ? -1 : 1;
	if (a->bus != b->bus)
		return a->bus < b->bus ? -1 : 1;
	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	if (a->func != b->func)
		return a->func < b->func ? -1 : 1;
	return 0;
}

/* Compare by CUDA's speed estimate: higher compute capability, then cores. */
static int
gpu_cmp_speed(const struct gpu_info *a, const struct gpu_info *b)
{
	if (a->cc_major != b->cc_major)
		return a->cc_major > b->cc_major ? -1 : 1;
	if (a->cc_minor != b->cc_minor)
		return a->cc_minor > b->cc_minor ? -1 : 1;
	if (a->cores != b->cores)
		return a->cores > b->cores ? -1 : 1;
	return 0;
}

/* Stable insertion sort (n is small and stability keeps bus order). */
static void
gpu_sort(struct gpu_info *g, int n,
    int (*cmp)(const struct gpu_info *, const struct gpu_info *))
{
	struct gpu_info t;
	int i, j;

	for (i = 1; i < n; i++) {
		t = g[i];
		for (j = i; j > 0 && cmp(&g[j - 1], &t) > 0; j--)
			g[j] = g[j - 1];
		g[j] = t;
	}
}

/* Put GPUs in CUDA order: bus id, then (FASTEST_FIRST) speed. */
void
gpu_order(struct gpu_info *g, int n, int fastest_first)
{
	gpu_sort(g, n, gpu_cmp_bus);
	if (fastest_first)
		gpu_sort(g, n, gpu_cmp_speed);
}

/* Index of the one GPU whose UUID starts with prefix; -1 none, -2 several. */
static int
gpu_find_uuid(const struct gpu_info *g, int n, const char *prefix)
{
	size_t len = strlen(prefix);
	int i, found = -1;

	for (i = 0; i < n; i++) {
		if (g[i].uuid[0] == '\0' || strncasecmp(g[i].uuid, prefix, len))
			continue;
		if (found != -1)
			return -2;
		found = i;
	}
	return found;
}

/* Index of the GPU owning the MIG device named by tok; -1 none, -2 several. */
static int
gpu_find_mig(const struct gpu_info *g, int n, const char *tok)
{
	char uuid[GPU_UUID_MAX];
	size_t len;
	int i, k, found = -1;

	/* MIG-GPU-<uuid>/gi/ci */
	if (strncasecmp(tok, "MIG-GPU-", 8) == 0) {
		len = strcspn(tok + 4, "/");
		if (len >= sizeof(uuid))
			return -1;
		memcpy(uuid, tok + 4, len);
		uuid[len] = '\0';
		return gpu_find_uuid(g, n, uuid);
	}
	len = strlen(tok);
	for (i = 0; i < n; i++)
		for (k = 0; k < g[i].nmig; k++) {
			if (strncasecmp(g[i].mig[k], tok, len))
				continue;
			if (found != -1 && found != i)
				return -2;
			found = i;
		}
	return found;
}

/* Whether any GPU has a UUID (NVML found them). */
static int
gpu_have_uuids(const struct gpu_info *g, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (g[i].uuid[0] != '\0')
			return 1;
	return 0;
}

/*
 * Resolve one CUDA_VISIBLE_DEVICES entry to a physical index: >= 0, -1 when
 * CUDA would find it invalid (err says why), -2 when it cannot be resolved
 * here at all (a UUID without known UUIDs).
 */
static int
gpu_resolve(const char *tok, const struct gpu_info *g, int n, char *err,
    size_t errlen)
{
	char *end;
	long v;
	int i;

	if (strncasecmp(tok, "GPU-", 4) == 0 ||
	    strncasecmp(tok, "MIG-", 4) == 0) {
		if (!gpu_have_uuids(g, n))
			return -2;
		i = toupper((unsigned char)tok[0]) == 'G' ?
		    gpu_find_uuid(g, n, tok) : gpu_find_mig(g, n, tok);
		if (i < 0)
			return errbuf_set(err, errlen, "%s", i == -2 ?
			    "ambiguous UUID prefix" : "unknown UUID");
		return i;
	}
	if (!isdigit((unsigned char)tok[0]))
		return errbuf_set(err, errlen, "not a device index or UUID");
	errno = 0;
	v = strtol(tok, &end, 10);
	if (*end != '\0' || errno != 0)
		return errbuf_set(err, errlen, "not a device index or UUID");
	if (v >= n)
		return errbuf_set(err, errlen, "no such device");
	return (int)v;
}

/* Copy the entry [s, s+len) without surrounding blanks into tok. */
static int
gpu_token(const char *s, size_t len, char *tok, size_t toklen)
{
	while (len > 0 && isspace((unsigned char)*s)) {
		s++;
		len--;
	}
	while (len > 0 && isspace((unsigned char)s[len - 1]))
		len--;
	if (len >= toklen)
		return -1;
	memcpy(tok, s, len);
	tok[len] = '\0';
	return 0;
}

/* Whether physical GPU phys is already in out[0..k). */
static int
gpu_listed(const struct gpu_vis *out, int k, int phys)
{
	int i;

	for (i = 0; i < k; i++)
		if (out[i].phys == phys)
			return 1;
	return 0;
}

/* Fill out[] with every GPU, named by UUID when known, else by ordinal. */
static int
gpu_visible_all(const struct gpu_info *g, int n, struct gpu_vis *out,
    int outmax)
{
	int i;

	for (i = 0; i < n && i < outmax; i++) {
		out[i].phys = i;
		if (g[i].uuid[0] != '\0')
			snprintf(out[i].token, sizeof(out[i].token), "%s",
			    g[i].uuid);
		else
			snprintf(out[i].token, sizeof(out[i].token), "%d", i);
	}
	return i;
}

/*
 * Contract: cvd is untrusted text of any length; the result never exceeds
 * min(n, outmax) entries; entries are resolved left to right and the list
 * ends (as in the CUDA runtime) at the first invalid, out-of-range or
 * repeated entry, which warn names.
 */
int
gpu_visible_parse(const char *cvd, const struct gpu_info *g, int n,
    struct gpu_vis *out, int outmax, char *warn, size_t warnlen,
    char *err, size_t errlen)
{
	char tok[GPU_UUID_MAX], esc[64], why[64] = "";
	const char *p;
	size_t len;
	int k = 0, phys;

	if (warnlen > 0)
		warn[0] = '\0';
	if (cvd == NULL)
		return gpu_visible_all(g, n, out, outmax);
	if (strlen(cvd) > GPU_CVD_MAX) {
		errbuf_set(err, errlen, "CUDA_VISIBLE_DEVICES is longer than "
		    "%d bytes", GPU_CVD_MAX);
		return -1;
	}
	for (p = cvd; *p != '\0' || p == cvd; p += len + (p[len] == ',')) {
		len = strcspn(p, ",");
		if (len == 0 && p == cvd && *p == '\0')
			break;			/* empty: no GPU */
		if (k == outmax || gpu_token(p, len, tok, sizeof(tok)) == -1) {
			errbuf_set(why, sizeof(why), "entry too long or too "
			    "many entries");
			phys = -1;
		} else if ((phys = gpu_resolve(tok, g, n, why, sizeof(why))) ==
		    -2) {
			errbuf_set(err, errlen, "CUDA_VISIBLE_DEVICES names "
			    "GPU \"%s\" by UUID but no GPU UUID is known (NVML "
			    "unavailable); use device indices",
			    log_escape(esc, sizeof(esc), tok, strlen(tok)));
			return -1;
		} else if (phys >= 0 && gpu_listed(out, k, phys)) {
			errbuf_set(why, sizeof(why), "device listed twice");
			phys = -1;
		}
		if (phys < 0) {
			snprintf(warn, warnlen, "CUDA_VISIBLE_DEVICES entry %d "
			    "\"%s\": %s; CUDA ignores it and the entries after "
			    "it", k + 1, log_escape(esc, sizeof(esc), p, len),
			    why);
			break;
		}
		out[k].phys = phys;
		snprintf(out[k].token, sizeof(out[k].token), "%s", tok);
		k++;
		if (p[len] == '\0')
			break;
	}
	return k;
}

/* Whether an entry of CUDA_VISIBLE_DEVICES names a GPU or MIG by UUID. */
int
gpu_visible_names_uuid(const char *cvd)
{
	const char *p;

	for (p = cvd; p != NULL && *p != '\0'; p += strcspn(p, ",")) {
		p += strspn(p, ", \t\n\v\f\r");
		if (strncasecmp(p, "GPU-", 4) == 0 ||
		    strncasecmp(p, "MIG-", 4) == 0)
			return 1;
	}
	return 0;
}
