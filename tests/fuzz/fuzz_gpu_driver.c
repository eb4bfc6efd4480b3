/*
 * fuzz_gpu_driver.c: libFuzzer target for launcher/place/gpu_driver.c, the
 * "GPU UUID:" line of the NVIDIA driver's
 * /proc/driver/nvidia/gpus/<bus id>/information (gpu_driver_uuid_parse).
 * Input: one byte for the room (1..256 bytes), then the file's text.
 *
 * Checked beyond crashes and UB: a UUID found fits the room, starts with
 * "GPU-", holds only hex digits and dashes (never the driver's "?"
 * placeholders), and appears in the text after "GPU UUID:".
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_driver.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	char uuid[256], *copy;
	size_t room, n, i;

	if (len < 1)
		return 0;
	room = (size_t)data[0] + 1;
	n = len - 1;
	if ((copy = malloc(n ? n : 1)) == NULL)
		return 0;
	memcpy(copy, data + 1, n);	/* an exact-size buffer for ASan */
	if (gpu_driver_uuid_parse(copy, n, uuid, room) == 0) {
		if (strlen(uuid) >= room || strncmp(uuid, "GPU-", 4) != 0 ||
		    memmem(copy, n, "GPU UUID:", 9) == NULL ||
		    memmem(copy, n, uuid, strlen(uuid)) == NULL)
			abort();
		for (i = 4; uuid[i] != '\0'; i++)
			if (strchr("0123456789abcdefABCDEF-", uuid[i]) == NULL)
				abort();
	}
	free(copy);
	return 0;
}
