/* SPDX-License-Identifier: MIT */
/*
 * Helpers of libneuron's guest tests. Each test is one program: exit 0 on
 * pass, 1 on failure, 77 to skip (no device), as tests/run-tests expects.
 */
#ifndef T_HELPERS_H
#define T_HELPERS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libneuron.h"

#define T_EXIT_PASS 0
#define T_EXIT_FAIL 1
#define T_EXIT_SKIP 77

static int t_failures;

#define t_check(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "%s:%d: check failed: %s\n",		\
			__FILE__, __LINE__, #cond);			\
		t_failures++;						\
	}								\
} while (0)

#define t_check_ret(expr, want) do {					\
	int t_ret_ = (expr);						\
	if (t_ret_ != (want)) {						\
		fprintf(stderr, "%s:%d: %s returned %d (%s), expected %d\n", \
			__FILE__, __LINE__, #expr, t_ret_,		\
			nrn_strerror(t_ret_), (want));			\
		t_failures++;						\
	}								\
} while (0)

/* Open device 0, or exit 77 when there is none. */
static inline struct nrn_device *t_open_device(void)
{
	struct nrn_device *dev;
	int ret;

	if (nrn_device_count() < 1) {
		fprintf(stderr, "no neuron device: skipped\n");
		exit(T_EXIT_SKIP);
	}
	ret = nrn_device_open(0, &dev);
	if (ret) {
		fprintf(stderr, "nrn_device_open: %s\n", nrn_strerror(ret));
		exit(T_EXIT_FAIL);
	}
	return dev;
}

static inline void t_fill(void *p, size_t len, unsigned int seed)
{
	unsigned char *b = p;

	for (size_t i = 0; i < len; i++)
		b[i] = (unsigned char)(i * 131 + seed + (i >> 9));
}

/* A device-memory buffer of @size bytes (a failure is counted: NULL). */
static inline struct nrn_buffer *t_buffer(struct nrn_device *dev, size_t size)
{
	struct nrn_buffer *b = NULL;

	t_check_ret(nrn_buffer_alloc(dev, size, NRN_MEM_DEVICE, &b), 0);
	return b;
}

static inline int t_exit(void)
{
	return t_failures ? T_EXIT_FAIL : T_EXIT_PASS;
}

#endif /* T_HELPERS_H */
