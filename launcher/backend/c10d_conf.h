/*
 * c10d_conf.h: the c10d backend's --rdzv-conf keys (c10d_conf.c), with
 * torchrun's defaults.
 */
#ifndef CGRUN_C10D_CONF_H
#define CGRUN_C10D_CONF_H

#include <stddef.h>
#include <stdint.h>

/* --rdzv-conf, with torchrun's defaults (all times in ms). */
struct c10d_conf {
	uint32_t	join_ms;	/* join_timeout, 600 s */
	uint32_t	last_call_ms;	/* last_call_timeout, 30 s */
	uint32_t	close_ms;	/* close_timeout, 30 s */
	uint32_t	keepalive_ms;	/* keep_alive_interval, 5 s */
	uint32_t	keepalive_max;	/* keep_alive_max_attempt, 3 */
	uint32_t	heartbeat_ms;	/* heartbeat_timeout, 5 s (accepted) */
	uint32_t	read_ms;	/* read_timeout, 60 s: connecting */
	int		is_host;	/* -1 heuristic, 0 no, 1 yes */
};

/* Parse "k=v,k=v" (NULL: defaults); -1 with err on a bad value. */
int	c10d_conf_parse(const char *, struct c10d_conf *, char *err,
	    size_t errlen);

#endif /* CGRUN_C10D_CONF_H */
