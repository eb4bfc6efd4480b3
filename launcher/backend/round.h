/*
 * round.h: what a rendezvous round gives an agent, whatever the backend
 * (backend.h: local standalone or static, c10d).  The launcher's spawn
 * code (worker_env.c) reads only this.
 */
#ifndef CGRUN_ROUND_H
#define CGRUN_ROUND_H

#define ROUND_ADDR_MAX 256
#define ROUND_RUNID_MAX 256

struct round_info {
	unsigned	round;			/* rendezvous round number */
	int		group_rank;		/* this node's rank in the round */
	int		group_world_size;	/* nodes in the round */
	int		rank_base;		/* global rank of local rank 0 */
	int		world_size;		/* workers in the round */
	int		local_world_size;	/* workers on this node */
	char		master_addr[ROUND_ADDR_MAX];	/* job store host */
	int		master_port;		/* job store port */
	int		restart_count;		/* TORCHELASTIC_RESTART_COUNT */
	char		run_id[ROUND_RUNID_MAX];
};

#endif /* CGRUN_ROUND_H */
