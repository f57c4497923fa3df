/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the collective tests: every rank's data is a function of
 * (rank, index), so each rank computes the CPU reference of its own result
 * without talking to the others. Values are small integers (or powers of
 * two for PROD), so every partial result is exact in bf16 and f16 and the
 * comparison is exact -- except AVG when the ranks are not a power of two
 * (a division): there the tolerance is one unit in the last place of the
 * dtype.
 */
#ifndef T_COMM_H
#define T_COMM_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "t_helpers.h"

static inline uint16_t t_f32_to_bf16(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	if ((u & 0x7fffffff) > 0x7f800000)
		return (uint16_t)((u >> 16) | 0x40);
	u += 0x7fff + ((u >> 16) & 1);
	return (uint16_t)(u >> 16);
}

static inline float t_bf16_to_f32(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;

	memcpy(&f, &u, 4);
	return f;
}

/* binary16, round to nearest even (normal and subnormal numbers). */
static inline uint16_t t_f32_to_f16(float f)
{
	uint32_t u, sign, mant;
	int exp;

	memcpy(&u, &f, 4);
	sign = (u >> 16) & 0x8000;
	exp = (int)((u >> 23) & 0xff) - 127 + 15;
	mant = u & 0x7fffff;
	if (((u >> 23) & 0xff) == 0xff)
		return (uint16_t)(sign | 0x7c00 | (mant ? 0x200 : 0));
	if (exp >= 31)
		return (uint16_t)(sign | 0x7c00);
	if (exp <= 0) {
		if (exp < -10)
			return (uint16_t)sign;
		mant |= 0x800000;
		unsigned int shift = (unsigned int)(14 - exp);
		uint32_t half = mant >> shift, rem = mant & ((1u << shift) - 1);
		uint32_t mid = 1u << (shift - 1);

		if (rem > mid || (rem == mid && (half & 1)))
			half++;
		return (uint16_t)(sign | half);
	}
	uint32_t h = (uint32_t)exp << 10 | mant >> 13, rem = mant & 0x1fff;

	if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
		h++;
	return (uint16_t)(sign | h);
}

static inline float t_f16_to_f32(uint16_t h)
{
	int exp = (h >> 10) & 0x1f;
	float m = (float)(h & 0x3ff), v;

	if (exp == 0)
		v = ldexpf(m, -24);
	else if (exp == 31)
		v = (h & 0x3ff) ? NAN : INFINITY;
	else
		v = ldexpf(m + 1024, exp - 25);
	return (h & 0x8000) ? -v : v;
}

static inline size_t t_esize(enum nisa_dtype dt)
{
	return dt == NISA_F32 ? 4 : 2;
}

static inline void t_store(enum nisa_dtype dt, void *p, size_t i, float v)
{
	if (dt == NISA_F32)
		((float *)p)[i] = v;
	else if (dt == NISA_BF16)
		((uint16_t *)p)[i] = t_f32_to_bf16(v);
	else
		((uint16_t *)p)[i] = t_f32_to_f16(v);
}

static inline float t_load(enum nisa_dtype dt, const void *p, size_t i)
{
	if (dt == NISA_F32)
		return ((const float *)p)[i];
	if (dt == NISA_BF16)
		return t_bf16_to_f32(((const uint16_t *)p)[i]);
	return t_f16_to_f32(((const uint16_t *)p)[i]);
}

/* Rank @r's element @i for reduction @op. */
static inline float t_gen(enum nrn_reduce_op op, int r, uint64_t i)
{
	static const float prod[4] = { 1, 2, -1, 0.5f };

	if (op == NRN_REDUCE_PROD)
		return prod[(i + (uint64_t)r) % 4];
	return (float)((int)((i * 7 + (uint64_t)r * 13) % 17) - 8);
}

/* op over ranks 0..n-1 of t_gen(op, r, i), rounded to @dt. */
static inline float t_ref(enum nrn_reduce_op op, enum nisa_dtype dt, int n, uint64_t i)
{
	float acc = t_gen(op, 0, i);
	char tmp[4];

	for (int r = 1; r < n; r++) {
		float v = t_gen(op, r, i);

		if (op == NRN_REDUCE_PROD)
			acc *= v;
		else if (op == NRN_REDUCE_MAX)
			acc = v > acc ? v : acc;
		else if (op == NRN_REDUCE_MIN)
			acc = v < acc ? v : acc;
		else
			acc += v;
	}
	if (op == NRN_REDUCE_AVG)
		acc = acc / (float)n;
	t_store(dt, tmp, 0, acc);
	return t_load(dt, tmp, 0);
}

/* @got equals @want, within one ulp of @dt when @approx. */
static inline bool t_close(enum nisa_dtype dt, float got, float want, bool approx)
{
	float ulp = dt == NISA_F32 ? 0x1p-23f : dt == NISA_BF16 ? 0x1p-7f : 0x1p-10f;

	if (!approx)
		return got == want;
	return fabsf(got - want) <= fabsf(want) * ulp * 1.01f;
}

static inline const char *t_dtype_name(enum nisa_dtype dt)
{
	return dt == NISA_F32 ? "f32" : dt == NISA_BF16 ? "bf16" : "f16";
}

#endif /* T_COMM_H */
