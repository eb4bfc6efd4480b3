/*
 * fuzz_store.c: libFuzzer target for the whole store server
 * (rendezvous/store/, kv.c, proto/wire_parse.c, and the rendezvous
 * engine behind native connections), end to end over real sockets.  One server listens
 * on a Unix socket for the life of the process; each input is a list of
 * records [ctl][len][len bytes] sent by up to three client connections
 * (ctl's low two bits pick it, bit 7 closes it first, bit 6 counts len
 * in units of 64 bytes; bit 5 of the first record's picks a second
 * server with tiny limits), so one client's SET can wake another's WAIT.  Then every client half-closes, reads
 * until the server hangs up, and the store (and engine) are reset.  Logs
 * are formatted at debug level and discarded.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "rdzv.h"
#include "store.h"

#define FS_CONNS	3
#define FS_TURNS	64	/* loop turns without progress before giving up */

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static struct event_base *fs_base;
/* Two servers: default limits, and tiny ones (every refusal in reach). */
static struct store *fs_stores[2];
static struct rdzv *fs_rdzvs[2];
static struct sockaddr_un fs_addrs[2];
static socklen_t fs_addrlens[2];
/* The server of the current input. */
static struct store *fs_store;
static struct sockaddr_un fs_addr;
static socklen_t fs_addrlen;

/* Log sink: drop the line (it was formatted, which is what we test). */
static void
fs_sink(int level, const char *line, void *arg)
{
}

/* Open connections the store still holds. */
static size_t
fs_open_conns(void)
{
	struct store_stats s;

	store_stats(fs_store, &s);
	return s.conns[0] + s.conns[1] + s.conns[2] + s.conns[3];
}

/* Start server i (tiny: small limits) listening on an abstract socket. */
static void
fs_setup_one(int i, int tiny)
{
	struct store_limits lim;
	struct sockaddr_un *a = &fs_addrs[i];
	char err[256];
	int fd;

	store_limits_default(&lim);
	lim.max_outbuf = 1024 * 1024;
	lim.max_conns = 16;
	if (tiny) {
		lim.max_key = 16;
		lim.max_value = 64;
		lim.max_keys_per_req = 4;
		lim.max_inbuf = 4096;
		lim.max_outbuf = 4096;
		lim.out_high = 1024;		/* pause and resume readers */
		lim.max_outbuf_total = 2048;	/* raised to 16 x max_value */
		lim.max_conns = 2;
	}
	if ((fs_stores[i] = store_new(fs_base, &lim)) == NULL ||
	    (fs_rdzvs[i] = rdzv_attach(fs_stores[i], fs_base)) == NULL)
		abort();
	a->sun_family = AF_UNIX;	/* abstract: no file to clean up */
	snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1,
	    "cgrun-fuzz-store.%ld.%d", (long)getpid(), i);
	fs_addrlens[i] = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
	    1 + strlen(a->sun_path + 1));
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0)) == -1 ||
	    bind(fd, (struct sockaddr *)a, fs_addrlens[i]) == -1 ||
	    listen(fd, 64) == -1 ||
	    store_adopt_listener(fs_stores[i], fd, err, sizeof(err)) == -1) {
		fprintf(stderr, "fuzz_store: set-up: %s\n", strerror(errno));
		abort();
	}
}

/* Start both servers once. */
static void
fs_setup(void)
{
	log_set_sink(fs_sink, NULL);
	log_setlevel(LOG_LVL_DEBUG);
	if ((fs_base = event_base_new()) == NULL)
		abort();
	fs_setup_one(0, 0);
	fs_setup_one(1, 1);
}

/* A new client connection (non-blocking). */
static int
fs_connect(void)
{
	int fd;

	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0)) == -1)
		abort();
	if (connect(fd, (struct sockaddr *)&fs_addr, fs_addrlen) == -1) {
		fprintf(stderr, "fuzz_store: connect: %s\n", strerror(errno));
		abort();
	}
	return fd;
}

/* Read and discard what the server sent; 1 when it hung up. */
static int
fs_drain(int fd, int *progress)
{
	char buf[65536];
	ssize_t n;

	while ((n = recv(fd, buf, sizeof(buf), 0)) > 0)
		*progress = 1;
	return n == 0 || (n == -1 && errno != EAGAIN && errno != EINTR);
}

/* Send all of p, turning the loop while the socket is full. */
static void
fs_send(int fd, const uint8_t *p, size_t len)
{
	int turns = 0, progress;
	ssize_t n;

	while (len > 0 && turns < FS_TURNS) {
		n = send(fd, p, len, MSG_NOSIGNAL);
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n == -1 && errno != EAGAIN && errno != EINTR)
			return;		/* the server closed on us */
		event_base_loop(fs_base, EVLOOP_NONBLOCK);
		progress = 0;
		(void)fs_drain(fd, &progress);
		turns = progress ? 0 : turns + 1;
	}
}

/* libFuzzer entry: one session of up to three clients, then a reset. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd[FS_CONNS] = { -1, -1, -1 }, done[FS_CONNS] = { 0 };
	int i, ctl, turns, progress, all, srv;
	size_t off = 0, len;

	if (fs_base == NULL)
		fs_setup();
	srv = size > 0 && (data[0] & 0x20) ? 1 : 0;	/* first ctl picks */
	fs_store = fs_stores[srv];
	fs_addr = fs_addrs[srv];
	fs_addrlen = fs_addrlens[srv];
	while (off + 2 <= size) {
		ctl = data[off];
		len = (size_t)data[off + 1] * (ctl & 0x40 ? 64 : 1);
		off += 2;
		if (len > size - off)
			len = size - off;
		i = (ctl & 3) % FS_CONNS;
		if ((ctl & 0x80) && fd[i] != -1) {
			close(fd[i]);
			fd[i] = -1;
		}
		if (fd[i] == -1)
			fd[i] = fs_connect();
		fs_send(fd[i], data + off, len);
		off += len;
		event_base_loop(fs_base, EVLOOP_NONBLOCK);
	}
	for (i = 0; i < FS_CONNS; i++)
		if (fd[i] != -1)
			shutdown(fd[i], SHUT_WR);
	for (turns = 0; turns < FS_TURNS; ) {
		event_base_loop(fs_base, EVLOOP_NONBLOCK);
		progress = 0;
		all = 1;
		for (i = 0; i < FS_CONNS; i++) {
			if (fd[i] == -1 || done[i])
				continue;
			done[i] = fs_drain(fd[i], &progress);
			all = all && done[i];
		}
		if (all)
			break;
		turns = progress ? 0 : turns + 1;
	}
	for (i = 0; i < FS_CONNS; i++)
		if (fd[i] != -1)
			close(fd[i]);
	for (turns = 0; turns < FS_TURNS && fs_open_conns() > 0; turns++)
		event_base_loop(fs_base, EVLOOP_NONBLOCK);
	if (fs_open_conns() > 0)
		abort();	/* the server kept a connection its peer closed */
	store_reset(fs_store);
	if (rdzv_njobs(fs_rdzvs[srv]) > 0) {	/* a fresh engine: no state */
		rdzv_free(fs_rdzvs[srv]);
		if ((fs_rdzvs[srv] = rdzv_attach(fs_store, fs_base)) == NULL)
			abort();
	}
	return 0;
}
