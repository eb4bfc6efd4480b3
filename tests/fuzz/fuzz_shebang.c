/*
 * fuzz_shebang.c: libFuzzer target for launcher/supervise/shebang.c, the
 * "#!" line of a worker script (whether it names a Python interpreter,
 * directly or through env).  Input: the first bytes of the file.
 *
 * Checked beyond crashes and UB: the answer depends only on the first
 * SHEBANG_LINE_MAX bytes; without "#!" at the start, or without "python"
 * anywhere in the line, the answer is 0.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shebang.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	const char *buf = (const char *)data;
	char *copy;
	int r;

	if ((copy = malloc(len ? len : 1)) == NULL)
		return 0;
	memcpy(copy, buf, len);	/* an exact-size buffer for ASan */
	r = shebang_names_python(copy, len);
	if (len > SHEBANG_LINE_MAX &&
	    r != shebang_names_python(copy, SHEBANG_LINE_MAX))
		abort();
	if (r && (len < 2 || memcmp(copy, "#!", 2) != 0 ||
	    memmem(copy, len, "python", 6) == NULL))
		abort();
	free(copy);
	return 0;
}
