/*
 * heartbeat.c: cgrun_heartbeat() (cgrun/heartbeat.h): one line on the
 * channel cgrun's watchdog gave this worker, never blocking.
 */
#include <sys/socket.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cgrun/heartbeat.h"

#define HB_NONE		-1	/* CGRUN_HEARTBEAT_FD unset */
#define HB_BAD		-2	/* set, but not a descriptor number */

static pthread_once_t hb_once = PTHREAD_ONCE_INIT;
static int hb_fd = HB_NONE;

/* Read CGRUN_HEARTBEAT_FD once: plain decimal digits, a number > 2. */
static void
hb_init(void)
{
	const char *s = getenv("CGRUN_HEARTBEAT_FD");
	char *end;
	long v;

	if (s == NULL || *s == '\0')
		return;
	errno = 0;
	v = strtol(s, &end, 10);
	hb_fd = (*s >= '0' && *s <= '9' && *end == '\0' && errno == 0 &&
	    v > 2 && v < INT_MAX) ? (int)v : HB_BAD;
}

/* Send one heartbeat (see heartbeat.h for the contract). */
int
cgrun_heartbeat(const char *section)
{
	char line[CGRUN_HEARTBEAT_SECTION_MAX + 1];
	size_t i, n = section != NULL ? strnlen(section,
	    CGRUN_HEARTBEAT_SECTION_MAX) : 0;

	pthread_once(&hb_once, hb_init);
	if (hb_fd == HB_NONE)
		return 1;
	if (hb_fd == HB_BAD) {
		errno = EINVAL;
		return -1;
	}
	for (i = 0; i < n; i++)		/* one line, whatever section holds */
		line[i] = section[i] == '\n' ? ' ' : section[i];
	line[n++] = '\n';
	if (send(hb_fd, line, n, MSG_DONTWAIT | MSG_NOSIGNAL) == -1)
		return -1;
	return 0;
}
