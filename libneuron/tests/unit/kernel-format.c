// SPDX-License-Identifier: MIT
/*
 * Description: host unit test, no device needed -- the kernel builder, the
 * compiled-kernel format (round trip, checksum, versions, truncation) and
 * the disassembler's text.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libneuron.h"

static int failures;

#define CHECK(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond); \
		failures++;						\
	}								\
} while (0)

static struct nisa_tensor t1(unsigned int slot, uint32_t n)
{
	return (struct nisa_tensor){ .slot = slot, .dtype = NISA_F32, .ndim = 1,
				    .shape = { n }, .strides = { 1 } };
}

int main(void)
{
	struct nisa_insn add = { .opcode = NISA_INSN_BINARY, .subop = NISA_BIN_ADD,
				.dst = t1(2, 8), .src = { t1(0, 8), t1(1, 8) } };
	struct nisa_insn mm = { .opcode = NISA_INSN_MATMUL, .flags = NISA_IF_BIAS };
	struct nrn_kernel *k, *back;
	double alpha = 0.5;
	char text[512];
	void *blob;
	size_t len;

	memcpy(&add.alpha, &alpha, sizeof(alpha));
	CHECK(nrn_kernel_create(3, &k) == 0);
	CHECK(nrn_kernel_create(65, &back) == -EINVAL);
	CHECK(nrn_kernel_append(k, &add) == 0);
	mm.dst = t1(2, 4);
	mm.src[0] = t1(0, 4);
	mm.src[1] = t1(1, 4);
	mm.src[2] = t1(3, 4); /* slot 3 does not exist */
	CHECK(nrn_kernel_append(k, &mm) == -EINVAL);
	mm.src[2] = t1(2, 4);
	CHECK(nrn_kernel_append(k, &mm) == 0);
	CHECK(nrn_kernel_count(k) == 2);

	/* Round trip through the serialized form. */
	CHECK(nrn_kernel_serialize(k, &blob, &len) == 0);
	CHECK(len == 40 + 2 * sizeof(struct nisa_insn));
	CHECK(memcmp(blob, "NRNKERN", 8) == 0);
	CHECK(nrn_kernel_deserialize(blob, len, &back) == 0);
	CHECK(nrn_kernel_count(back) == 2 && nrn_kernel_slots(back) == 3);
	CHECK(memcmp(nrn_kernel_insns(back), nrn_kernel_insns(k),
		     2 * sizeof(struct nisa_insn)) == 0);
	nrn_kernel_destroy(back);
	/* Every corrupted byte of the body is caught by the checksum. */
	for (size_t i = 40; i < len; i += 97) {
		((unsigned char *)blob)[i] ^= 0x10;
		CHECK(nrn_kernel_deserialize(blob, len, &back) == -EBADMSG);
		((unsigned char *)blob)[i] ^= 0x10;
	}
	CHECK(nrn_kernel_deserialize(blob, 39, &back) == -EINVAL);
	((uint32_t *)blob)[2] = 2; /* format version */
	CHECK(nrn_kernel_deserialize(blob, len, &back) == -ENOTSUP);
	free(blob);

	/* Disassembly. */
	CHECK(nrn_insn_format(&add, text, sizeof(text)) == 0);
	CHECK(strcmp(text, "binary.add dst=s2+0:f32[8]/(1) src0=s0+0:f32[8]/(1) "
			   "src1=s1+0:f32[8]/(1) alpha=0.5") == 0);
	CHECK(nrn_insn_format(&mm, text, sizeof(text)) == 0);
	CHECK(strstr(text, "matmul dst=") == text && strstr(text, "src2=s2"));
	CHECK(nrn_insn_format(&add, text, 10) == -ENOSPC);
	CHECK(strlen(text) == 9);
	{
		struct nisa_insn bad = { .opcode = 999 };

		CHECK(nrn_insn_format(&bad, text, sizeof(text)) == 0);
		CHECK(strstr(text, "bad opcode") != NULL);
	}

	/* Every subop the ISA defines has a name (none printed as "?"). */
	{
		static const unsigned int subops[][2] = {
			{ NISA_INSN_UNARY, NISA_NUM_UNARY }, { NISA_INSN_BINARY, NISA_NUM_BINARY },
			{ NISA_INSN_COMPARE, NISA_NUM_COMPARE }, { NISA_INSN_REDUCE, NISA_NUM_REDUCE },
			{ NISA_INSN_SOFTMAX, NISA_NUM_SOFTMAX }, { NISA_INSN_GATHER, NISA_NUM_IDX },
			{ NISA_INSN_RANDOM, NISA_NUM_RANDOM },
		};

		for (unsigned int i = 0; i < sizeof(subops) / sizeof(subops[0]); i++) {
			for (unsigned int sub = 0; sub < subops[i][1]; sub++) {
				struct nisa_insn x = { .opcode = (uint16_t)subops[i][0],
						      .subop = (uint16_t)sub };

				CHECK(nrn_insn_format(&x, text, sizeof(text)) == 0);
				CHECK(strchr(text, '.') && !strstr(text, ".?"));
			}
		}
	}

	/* The clock and the generator: their operands, seed and counter. */
	{
		struct nisa_insn ts = { .opcode = NISA_INSN_TIMESTAMP,
				       .dst = { .slot = 1, .dtype = NISA_I64, .offset = 8 } };
		struct nisa_insn rn = { .opcode = NISA_INSN_RANDOM, .subop = NISA_RNG_NORMAL,
				       .scalar = 0x2a, .alpha = 4096, .dst = t1(0, 8) };

		CHECK(nrn_insn_format(&ts, text, sizeof(text)) == 0);
		CHECK(strcmp(text, "timestamp dst=s1+8:i64[]/()") == 0);
		CHECK(nrn_insn_format(&rn, text, sizeof(text)) == 0);
		CHECK(strcmp(text, "random.normal dst=s0+0:f32[8]/(1) seed=0x2a offset=4096") == 0);
	}

	/* Errors as text. */
	CHECK(strstr(nrn_strerror(-ETIMEDOUT), "hung") != NULL);
	CHECK(strcmp(nrn_device_error_name(6), "no such buffer slot") == 0);
	CHECK(strcmp(nrn_device_error_name(999), "unknown device error") == 0);

	nrn_kernel_destroy(k);
	printf("%s\n", failures ? "FAIL" : "PASS");
	return failures ? 1 : 0;
}
