/*
 * slurm_port.c: the rendezvous port of a Slurm step.
 *
 * Every node of a step must name the same endpoint, and two steps that run
 * at once (srun --overlap twice, array tasks or jobs that share their first
 * node) must not meet on one port, so the port is a function of the ids
 * alone:
 *
 *	port = 20000 + (16 * JOB + STEP) mod 9000
 *
 * JOB is SLURM_JOB_ID (plus SLURM_HET_JOB_OFFSET for a heterogeneous job's
 * component), STEP is SLURM_STEP_ID.  Steps of one job get consecutive
 * ports (9000 of them before one repeats); steps 0-15 of jobs whose ids
 * differ by less than 562 never share one.  20000-28999 keeps clear of the
 * well-known ports, of torchrun's 29400 and torch's 29500, and of Linux's
 * ephemeral range (32768 and up) that outgoing connections draw from.
 * CGRUN_SLURM_PORT, else the first port Slurm reserved for the step
 * (SLURM_STEP_RESV_PORTS, srun --resv-ports), comes first.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "errbuf.h"
#include "log.h"
#include "slurm.h"

/* The port of step `step` of job `job` (formula above). */
int
slurm_port_derive(unsigned long job, unsigned long step)
{
	unsigned long long k = (unsigned long long)SLURM_PORT_STEPS * job +
	    step;

	return SLURM_PORT_BASE + (int)(k % SLURM_PORT_SPAN);
}

/* A port number at the start of v (up to '-', ',' or the end); -1 if none. */
static int
slurm_port_number(const char *v, int whole)
{
	long p = 0;
	size_t i;

	for (i = 0; v[i] >= '0' && v[i] <= '9' && i < 6; i++)
		p = p * 10 + (v[i] - '0');
	if (i == 0 || p < 1 || p > 65535 ||
	    (whole ? v[i] != '\0' : strchr("-,", v[i]) == NULL))
		return -1;
	return (int)p;
}

/* The step's port and where it came from (see slurm.h). */
int
slurm_port_pick(unsigned long job, unsigned long step, char *from,
    size_t fromlen, char *err, size_t errlen)
{
	const char *v = getenv("CGRUN_SLURM_PORT");
	int port;

	if (v != NULL && *v != '\0') {
		if ((port = slurm_port_number(v, 1)) == -1) {
			errbuf_set(err, errlen, "CGRUN_SLURM_PORT=\"%.32s\": "
			    "expected a port 1-65535", v);
			return -1;
		}
		snprintf(from, fromlen, "from CGRUN_SLURM_PORT");
		return port;
	}
	if ((v = getenv("SLURM_STEP_RESV_PORTS")) != NULL && *v != '\0') {
		if ((port = slurm_port_number(v, 0)) != -1) {
			snprintf(from, fromlen, "the first of "
			    "SLURM_STEP_RESV_PORTS");
			return port;
		}
		log_warnx("slurm: SLURM_STEP_RESV_PORTS=%.32s not used: no "
		    "port at its start", v);
	}
	port = slurm_port_derive(job, step);
	snprintf(from, fromlen, "%d + (%d * %lu + %lu) mod %d (job, step)",
	    SLURM_PORT_BASE, SLURM_PORT_STEPS, job, step, SLURM_PORT_SPAN);
	return port;
}

/* Whether binding one address on the port fails because it is taken. */
static int
slurm_port_taken(const struct addrinfo *ai)
{
	int fd, one = 1, taken;

	if ((fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
	    ai->ai_protocol)) == -1)
		return 0;
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ai->ai_family == AF_INET6)
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one,
		    sizeof(one));
	taken = bind(fd, ai->ai_addr, ai->ai_addrlen) == -1 &&
	    errno == EADDRINUSE;
	close(fd);
	return taken;
}

/*
 * On the step's first node (SLURM_NODEID 0, the one that hosts the
 * rendezvous), try the endpoint's port as the hosting agent will bind it
 * (see slurm.h).  A short probe: the agent binds it for good moments later.
 */
int
slurm_port_check(const struct slurm_info *si, char *err, size_t errlen)
{
	struct addrinfo hints, *res, *ai;
	char serv[16];
	int taken = 0;

	if (!si->in_step || si->node_id != 0 || si->port <= 0)
		return 0;
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	snprintf(serv, sizeof(serv), "%d", si->port);
	if (getaddrinfo(si->host, serv, &hints, &res) != 0)
		return 0;
	for (ai = res; ai != NULL && !taken; ai = ai->ai_next)
		taken = slurm_port_taken(ai);
	freeaddrinfo(res);
	if (!taken)
		return 0;
	errbuf_set(err, errlen, "rendezvous port %d on %s, chosen for Slurm "
	    "step %s (%s), is already in use by another program; give the step "
	    "another port with CGRUN_SLURM_PORT=PORT (the same on every node) "
	    "or --rdzv-endpoint=HOST:PORT",
	    si->port, si->host, si->run_id, si->endpoint_from);
	return -1;
}
