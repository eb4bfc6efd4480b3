/*
 * libapi_nccl_id.c: one rank of tests/libcgrun/t_libcgrun_nccl.sh.  Exchanges NCCL
 * unique ids through the job store and prints them; then tries to create
 * a communicator and prints the outcome.  Exit 0 unless the library
 * misbehaves (a failure to create the communicator is an outcome, not a
 * misbehaviour, but it must come with CUDA's or NCCL's text).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cgrun/nccl.h>
#include <cgrun/rank.h>
#include <cgrun/store.h>

/* Print id as hex after a label. */
static void
print_id(int rank, const char *label, const ncclUniqueId *id)
{
	size_t i;

	printf("rank %d %s ", rank, label);
	for (i = 0; i < sizeof(id->internal); i++)
		printf("%02x", (unsigned char)id->internal[i]);
	printf("\n");
}

int
main(void)
{
	char err[CGRUN_ERRLEN] = "";
	struct cgrun_store *s;
	struct cgrun_rank *r;
	ncclUniqueId id, id2, given;
	ncclComm_t comm;
	int rank, rc;

	if ((r = cgrun_rank_new(NULL, err)) == NULL ||
	    (s = cgrun_rank_store_connect(r, 20000, err)) == NULL) {
		fprintf(stderr, "setup: %s\n", err);
		return 1;
	}
	rank = cgrun_rank_rank(r);
	/* Created by rank 0 with ncclGetUniqueId, shared with all. */
	memset(&id, 0, sizeof(id));
	if (cgrun_nccl_unique_id(s, "world", rank, &id, 20000, err) == -1) {
		fprintf(stderr, "rank %d unique_id: %s\n", rank, err);
		return 1;
	}
	print_id(rank, "id1", &id);
	/* The same name again: a new id, again the same on every rank. */
	memset(&id2, 0, sizeof(id2));
	if (cgrun_nccl_unique_id(s, "world", rank, &id2, 20000, err) == -1) {
		fprintf(stderr, "rank %d unique_id #2: %s\n", rank, err);
		return 1;
	}
	print_id(rank, "id2", &id2);
	/* A given id (no NCCL call): rank 0's bytes reach everyone. */
	memset(&given, rank == 0 ? 0xab : rank, sizeof(given));
	if (cgrun_nccl_id_exchange(s, "given", rank, &given, 20000, err) == -1) {
		fprintf(stderr, "rank %d id_exchange: %s\n", rank, err);
		return 1;
	}
	print_id(rank, "given", &given);
	/* Nobody publishes "never": the others time out, saying so. */
	if (rank != 0) {
		errno = 0;
		if (cgrun_nccl_id_exchange(s, "never", rank, &given, 300, err)
		    != -1 || errno != ETIMEDOUT ||
		    strstr(err, "did not publish") == NULL) {
			fprintf(stderr, "rank %d: no timeout: %s\n", rank, err);
			return 1;
		}
		printf("rank %d timeout: %s\n", rank, err);
	}
	/* A value of the wrong size under an id key is refused. */
	if (rank == 0 && cgrun_store_set(s, "cgrun/nccl/bad/1/id", "short", 5)
	    == -1) {
		fprintf(stderr, "set: %s\n", cgrun_store_errmsg(s));
		return 1;
	}
	if (rank != 0) {
		errno = 0;
		if (cgrun_nccl_id_exchange(s, "bad", rank, &given, 5000, err)
		    != -1 || errno != EPROTO) {
			fprintf(stderr, "rank %d: bad id accepted: %s\n", rank,
			    err);
			return 1;
		}
		printf("rank %d bad id: %s\n", rank, err);
	}
	/* The communicator: without a GPU this must fail with a message. */
	rc = cgrun_nccl_comm_new(s, r, "comm", 20000, &comm, err);
	if (rc == 0) {
		printf("rank %d comm ok\n", rank);
		ncclCommDestroy(comm);
	} else if (err[0] == '\0') {
		fprintf(stderr, "rank %d comm failed without a message\n", rank);
		return 1;
	} else
		printf("rank %d comm error (errno %d): %s\n", rank, errno, err);
	cgrun_store_free(s);
	cgrun_rank_free(r);
	return 0;
}
