/*
 * fuzz_gpu.c: libFuzzer target for the GPU parsers of outside text in
 * launcher/place/gpu.c: CUDA_VISIBLE_DEVICES (gpu_visible_parse: indices,
 * GPU-/MIG- UUIDs and their prefixes, the cut where CUDA stops) and PCI
 * bus ids (gpu_busid_parse, the form NVML and sysfs write), and the
 * placement option values (plan_opts_check) and numeric --nproc-per-node
 * (placement_nproc).  Input: one byte for the number of GPUs (0..8), one
 * of flags (bit 0: UUIDs known, as from NVML; bits 1-2: MIG devices per
 * GPU), one for the output room (1..9 entries), then the text.
 *
 * Checked beyond crashes and UB: -1 always says why in err; a count never
 * exceeds the GPUs or the room; every entry names a distinct GPU with a
 * token that is the entry as written, trimmed; without a warning every
 * entry was taken (count = entries); a bus id that parses prints and
 * parses back to the same numbers.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "placement.h"

#define FG_GPUS		8
#define FG_ROOM		9

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Abort (a finding) unless cond holds. */
static void
fg_assert(int cond)
{
	if (!cond)
		abort();
}

/*
 * A machine of n GPUs whose UUIDs share prefixes ("GPU-0a...", "GPU-0b...",
 * "GPU-1a..."), so that prefix lookups can be unique or ambiguous.
 */
static void
fg_machine(struct gpu_info *g, int n, int flags)
{
	int i, k, nmig = (flags >> 1) & 3;

	memset(g, 0, sizeof(*g) * FG_GPUS);
	for (i = 0; i < n; i++) {
		g[i].bus = (unsigned)(0x18 + i);
		snprintf(g[i].busid, sizeof(g[i].busid), "0000:%02x:00.0",
		    g[i].bus);
		g[i].cc_major = g[i].cc_minor = g[i].cores = -1;
		if (flags & 1)
			snprintf(g[i].uuid, sizeof(g[i].uuid),
			    "GPU-%d%c-7e57-0000", i / 2, 'a' + i % 2);
		for (k = 0; k < nmig && (flags & 1); k++)
			snprintf(g[i].mig[k], sizeof(g[i].mig[k]),
			    "MIG-%d%d-ffff", i, k);
		g[i].nmig = (flags & 1) ? nmig : 0;
	}
}

/*
 * Number of comma-separated entries in s: "" has none, and a comma that
 * ends the text ends the list (as in CUDA) rather than adding an entry.
 */
static int
fg_entries(const char *s)
{
	size_t len = strlen(s);
	int n = 1;
	size_t i;

	if (len == 0)
		return 0;
	for (i = 0; i < len; i++)
		n += s[i] == ',';
	return len > 1 && s[len - 1] == ',' ? n - 1 : n;
}

/* Whether token t is entry i of s, blanks around it removed. */
static int
fg_is_entry(const char *s, int i, const char *t)
{
	size_t len;

	while (i-- > 0)
		s = strchr(s, ',') + 1;
	len = strcspn(s, ",");
	while (len > 0 && (*s == ' ' || (*s >= '\t' && *s <= '\r'))) {
		s++;
		len--;
	}
	while (len > 0 && (s[len - 1] == ' ' ||
	    (s[len - 1] >= '\t' && s[len - 1] <= '\r')))
		len--;
	return strlen(t) == len && memcmp(s, t, len) == 0;
}

/* gpu_visible_parse's contract on one input. */
static void
fg_visible(const char *cvd, const struct gpu_info *g, int n, int room)
{
	struct gpu_vis out[FG_ROOM];
	char warn[256], err[256];
	int k, i, j;

	err[0] = '\0';
	k = gpu_visible_parse(cvd, g, n, out, room, warn, sizeof(warn), err,
	    sizeof(err));
	if (k == -1) {
		fg_assert(err[0] != '\0');
		return;
	}
	fg_assert(k >= 0 && k <= n && k <= room);
	for (i = 0; i < k; i++) {
		fg_assert(out[i].phys >= 0 && out[i].phys < n);
		fg_assert(memchr(out[i].token, '\0', sizeof(out[i].token)) != NULL);
		fg_assert(fg_is_entry(cvd, i, out[i].token));
		for (j = 0; j < i; j++)
			fg_assert(out[j].phys != out[i].phys);
	}
	if (warn[0] == '\0')
		fg_assert(k == fg_entries(cvd));
	else
		fg_assert(k < fg_entries(cvd));
}

/* gpu_busid_parse: what parses prints and parses back the same. */
static void
fg_busid(const char *s)
{
	unsigned d, b, v, f, d2, b2, v2, f2;
	char buf[GPU_BUSID_MAX];

	if (gpu_busid_parse(s, &d, &b, &v, &f) == -1)
		return;
	fg_assert(b <= 0xff && v <= 0x1f && f <= 7);
	snprintf(buf, sizeof(buf), "%x:%02x:%02x.%x", d, b, v, f);
	fg_assert(gpu_busid_parse(buf, &d2, &b2, &v2, &f2) == 0);
	fg_assert(d == d2 && b == b2 && v == v2 && f == f2);
}

/* The placement option values, as cgrun's command line gives them. */
static void
fg_options(const char *s)
{
	struct plan_opts po = { s, NULL, NULL, NULL };
	char err[256];
	int n;

	err[0] = '\0';
	if (plan_opts_check(&po, err, sizeof(err)) == -1)
		fg_assert(err[0] != '\0');
	po.cpu_bind = NULL;
	po.numa_binding = po.gpu_visibility = po.mem_bind = s;
	err[0] = '\0';
	if (plan_opts_check(&po, err, sizeof(err)) == -1)
		fg_assert(err[0] != '\0');
	/* a number only: gpu, cpu and auto look at the machine */
	if (strcmp(s, "gpu") == 0 || strcmp(s, "auto") == 0)
		return;
	err[0] = '\0';
	n = placement_nproc(s, err, sizeof(err));
	fg_assert(n == -1 ? err[0] != '\0' : n >= 1 && n <= PLAN_NPROC_MAX);
}

/* libFuzzer entry: one machine and one text. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gpu_info g[FG_GPUS];
	char *text;
	int n, flags, room;

	if (size < 3)
		return 0;
	n = data[0] % (FG_GPUS + 1);
	flags = data[1];
	room = 1 + data[2] % FG_ROOM;
	if ((text = malloc(size - 2)) == NULL)
		abort();
	memcpy(text, data + 3, size - 3);
	text[size - 3] = '\0';
	fg_machine(g, n, flags);
	fg_visible(text, g, n, room);
	fg_busid(text);
	fg_options(text);
	free(text);
	return 0;
}
