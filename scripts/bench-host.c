// SPDX-License-Identifier: MIT
/*
 * Host baselines for `make bench`, measured natively on the machine that
 * runs QEMU: what the card's DMA engine (a memcpy inside QEMU) and GEMM
 * (OpenBLAS inside QEMU) are compared against, and a 4 MiB memcpy that
 * stays in the caches, counted as bytes read plus bytes written, as
 * neuron-bench counts the card's engine on its 4 MiB operands. Prints
 * JSON.
 */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(void)
{
	size_t big = 64u << 20;
	char *a = malloc(big), *b = malloc(big);
	int n = 1024;
	float *x = malloc(sizeof(float) * n * n), *y = malloc(sizeof(float) * n * n),
	      *z = malloc(sizeof(float) * n * n);
	double best_mem = 0, best_gemm = 0, best_small = 0;
	size_t small = 4u << 20;

	memset(a, 1, big);
	memset(b, 2, big);
	for (int r = 0; r < 5; r++) {
		double t0 = now_s(), g;

		memcpy(b, a, big);
		g = big / (now_s() - t0) / 1e9;
		best_mem = g > best_mem ? g : best_mem;
	}
	for (int r = 0; r < 9; r++) {
		double t0 = now_s(), g;

		for (int k = 0; k < 16; k++)
			memcpy(b, a, small);
		g = 16.0 * 2 * small / (now_s() - t0) / 1e9;
		best_small = g > best_small ? g : best_small;
	}
	for (int i = 0; i < n * n; i++) {
		x[i] = 0.5f;
		y[i] = 0.25f;
	}
	for (int r = 0; r < 5; r++) {
		double t0 = now_s(), g;

		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f,
			    x, n, y, n, 0.0f, z, n);
		g = 2.0 * n * n * n / (now_s() - t0) / 1e9;
		best_gemm = g > best_gemm ? g : best_gemm;
	}
	printf("{\n  \"host_memcpy_64m_gbps\": %.4g,\n  \"host_memcpy_4m_rw_gbps\": %.4g,\n"
	       "  \"host_sgemm_1024_gflops\": %.4g\n}\n", best_mem, best_small, best_gemm);
	return b[big - 1] == 1 && z[0] == 128.0f ? 0 : 1;
}
