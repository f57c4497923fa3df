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

	/* Every subop the ISA's tables define has a name (none printed as "?"). */
	for (unsigned int op = 0; op < NISA_NUM_OPCODES; op++) {
		unsigned int n = nisa_num_subops(op);

		if (op == NISA_INSN_EXPR || n < 2)
			continue;	/* EXPR's subop is a count; NONE has no name */
		for (unsigned int sub = 0; sub < n; sub++) {
			struct nisa_insn x = { .opcode = (uint16_t)op, .subop = (uint16_t)sub };

			if (op == NISA_INSN_SCATTER)
				x.subop = NISA_SCATTER_SUBOP(sub, sub % NISA_NUM_IDX);
			CHECK(nrn_insn_format(&x, text, sizeof(text)) == 0);
			CHECK(strchr(text, '.') && !strstr(text, ".?") && !strstr(text, "bad"));
		}
	}
	/* The operands printed are the ones the instruction uses. */
	{
		struct nisa_insn sv = { .opcode = NISA_INSN_LINALG, .subop = NISA_LA_GESDD,
				       .flags = NISA_IF_LA_NOVEC, .dst = t1(0, 4),
				       .src = { t1(1, 16) } };
		struct nisa_insn srt = { .opcode = NISA_INSN_SORT, .flags = NISA_IF_INDICES,
					.dst = t1(0, 8), .src = { t1(1, 8), t1(2, 8) } };

		CHECK(nrn_insn_format(&sv, text, sizeof(text)) == 0);
		CHECK(strstr(text, "linalg.gesdd dst=") == text && strstr(text, "src0=s1") &&
		      !strstr(text, "src1=") && strstr(text, " novec"));
		CHECK(nrn_insn_format(&srt, text, sizeof(text)) == 0);
		CHECK(strstr(text, "sort dst=") == text && strstr(text, "src1=s2") &&
		      strstr(text, " axis=0"));
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
