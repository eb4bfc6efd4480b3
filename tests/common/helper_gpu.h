/*
 * helper_gpu.h: paths the GPU and placement suites share: the fixture
 * machines (tests/place/topologies) and the fake NVML built next to the test
 * programs (tests/place/fake_nvml).
 */
#ifndef HELPER_GPU_H
#define HELPER_GPU_H

/* Path of tests/place/topologies/NAME.xml under $CGRUN_TOP; asserts it exists. */
const char *gpu_fixture(const char *name);
/* Path of the fake libnvidia-ml.so.1; asserts it was built. */
const char *gpu_fake_nvml(void);

#endif /* HELPER_GPU_H */
