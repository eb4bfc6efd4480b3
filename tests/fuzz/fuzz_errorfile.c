/*
 * fuzz_errorfile.c: libFuzzer target for the worker error file
 * (TORCHELASTIC_ERROR_FILE, JSON written by the worker, so untrusted)
 * as the launcher reads it (launcher/supervise/report.c): the failure report that
 * quotes its message and traceback, and the copy with errorCode set.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "report.h"

/* Scratch files: tmpfs where there is one (a file per execution). */
#define FE_DIR()	(access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp")

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Replace path's content with data. */
static void
fe_write(const char *path, const uint8_t *data, size_t size)
{
	ssize_t n;
	int fd;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) == -1)
		abort();
	while (size > 0) {
		if ((n = write(fd, data, size)) <= 0)
			abort();
		data += n;
		size -= (size_t)n;
	}
	close(fd);
}

/* libFuzzer entry: one error file, reported and copied. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char in[64], out[64];
	static FILE *devnull;
	struct report_failure f[2];
	struct report r;

	if (devnull == NULL) {
		if ((devnull = fopen("/dev/null", "we")) == NULL)
			abort();
		snprintf(in, sizeof(in), "%s/cgrun-fuzz-ef.%ld.json",
		    FE_DIR(), (long)getpid());
		snprintf(out, sizeof(out), "%s/cgrun-fuzz-ef.%ld.out",
		    FE_DIR(), (long)getpid());
	}
	fe_write(in, data, size);
	memset(f, 0, sizeof(f));
	f[0].rank = 3;
	f[0].pid = 1234;
	f[0].status = 1 << 8;		/* exit code 1 */
	f[0].when_ms = 1700000000000LL;
	snprintf(f[0].error_file, sizeof(f[0].error_file), "%s", in);
	f[1] = f[0];
	f[1].rank = 0;
	f[1].status = 9;		/* SIGKILL */
	f[1].after_stop = 1;
	memset(&r, 0, sizeof(r));
	r.name = "train.py";
	r.host = "node0";
	r.program = "python";
	r.max_restarts = 3;
	r.f = f;
	r.n = 2;
	report_print(devnull, &r);
	(void)report_copy_error_file(&f[0], out);
	unlink(out);
	return 0;
}
