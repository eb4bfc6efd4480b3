/*
 * gpu_driver.h: a GPU's UUID as the NVIDIA driver itself gives it, in
 * /proc/driver/nvidia/gpus/<bus id>/information (gpu_driver.c), read
 * without loading NVML.
 */
#ifndef CGRUN_GPU_DRIVER_H
#define CGRUN_GPU_DRIVER_H

#include <stddef.h>

#define GPU_DRIVER_INFO_MAX	4096	/* bytes of an information file read */

/*
 * The UUID in the text of a driver information file (len bytes, not
 * necessarily NUL-terminated): its "GPU UUID:" line, a "GPU-" UUID of hex
 * digits and dashes, into uuid; 0, or -1 when there is none, it is not yet
 * known (the driver writes "GPU-????????-..." before the GPU is
 * initialised) or it does not fit uuidlen.  Pure.
 */
int	gpu_driver_uuid_parse(const char *text, size_t len, char *uuid,
	    size_t uuidlen);

/*
 * The UUID of the GPU at busid (canonical "dddd:bb:dd.f", lower case, as
 * the driver names its directories) from root/<busid>/information (root
 * normally "/proc/driver/nvidia/gpus"): 0, or -1 when it cannot be read.
 */
int	gpu_driver_uuid(const char *root, const char *busid, char *uuid,
	    size_t uuidlen);

#endif /* CGRUN_GPU_DRIVER_H */
