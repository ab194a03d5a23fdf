#ifndef DISPATCH_KERNELS_PROBE_H_
#define DISPATCH_KERNELS_PROBE_H_

/* The probe kernel (probe.dispatch.c). dispatch_kernels_init() picks its
 * variant once; the calls below go through that pointer. */
int dispatch_kernels_init(void);
const char *dispatch_probe_whoami(void);
const char *dispatch_probe_chosen(void);
const char *dispatch_probe_targets(void);
float dispatch_probe_sum16(const float *x);

#endif
