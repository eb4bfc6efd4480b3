/*
 * nccl_allreduce.c: a CUDA worker bootstrapped by libcgrun-nccl.  Every
 * rank fills a device buffer with rank + 1, all-reduces it (sum) and
 * checks that every element is world * (world + 1) / 2.
 *
 * Run:  cgrun --standalone --nproc-per-node=gpu ./nccl_allreduce
 * Without a GPU it fails cleanly with CUDA's or NCCL's message.
 */
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime.h>

#include <cgrun/nccl.h>
#include <cgrun/rank.h>
#include <cgrun/store.h>

#define COUNT (1 << 20)

/* Print a failure and exit 1. */
static void __attribute__((noreturn))
die(int rank, const char *what, const char *err)
{
	fprintf(stderr, "nccl_allreduce rank %d: %s: %s\n", rank, what, err);
	exit(1);
}

/* All-reduce COUNT floats of value rank + 1 and check the sums. */
static void
allreduce(ncclComm_t comm, int rank, int world)
{
	float *dev, *host = malloc(COUNT * sizeof(float));
	cudaStream_t st;
	ncclResult_t nr;
	cudaError_t e;
	int i;

	if (host == NULL)
		die(rank, "malloc", "out of memory");
	for (i = 0; i < COUNT; i++)
		host[i] = (float)(rank + 1);
	if ((e = cudaMalloc((void **)&dev, COUNT * sizeof(float))) !=
	    cudaSuccess || (e = cudaStreamCreate(&st)) != cudaSuccess ||
	    (e = cudaMemcpy(dev, host, COUNT * sizeof(float),
	    cudaMemcpyHostToDevice)) != cudaSuccess)
		die(rank, "cuda", cudaGetErrorString(e));
	if ((nr = ncclAllReduce(dev, dev, COUNT, ncclFloat, ncclSum, comm,
	    st)) != ncclSuccess)
		die(rank, "ncclAllReduce", ncclGetErrorString(nr));
	if ((e = cudaStreamSynchronize(st)) != cudaSuccess ||
	    (e = cudaMemcpy(host, dev, COUNT * sizeof(float),
	    cudaMemcpyDeviceToHost)) != cudaSuccess)
		die(rank, "cuda", cudaGetErrorString(e));
	for (i = 0; i < COUNT; i++)
		if (host[i] != (float)(world * (world + 1) / 2))
			die(rank, "check", "wrong sum");
	cudaFree(dev);
	cudaStreamDestroy(st);
	free(host);
}

int
main(void)
{
	char err[CGRUN_ERRLEN];
	struct cgrun_store *s;
	struct cgrun_rank *r;
	ncclComm_t comm;
	int rank;

	if ((r = cgrun_rank_new(NULL, err)) == NULL)
		die(-1, "environment", err);
	rank = cgrun_rank_rank(r);
	if ((s = cgrun_rank_store_connect(r, 60000, err)) == NULL)
		die(rank, "store", err);
	if (cgrun_nccl_comm_new(s, r, "world", 120000, &comm, err) == -1)
		die(rank, "communicator", err);
	allreduce(comm, rank, cgrun_rank_world_size(r));
	printf("rank %d: all-reduce of %d floats over %d ranks ok\n", rank,
	    COUNT, cgrun_rank_world_size(r));
	ncclCommDestroy(comm);
	cgrun_store_free(s);
	cgrun_rank_free(r);
	return 0;
}
