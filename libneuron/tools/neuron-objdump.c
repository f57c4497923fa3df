// SPDX-License-Identifier: MIT
/*
 * neuron-objdump: print a compiled kernel (nrn_kernel_save()'s file format)
 * or a compiled graph (nrn_graph_serialize()'s: what the compile cache and
 * torch_neuron.kernels' Kernel.dump() write) as text.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libneuron.h"

static int read_file(const char *path, void **bufp, size_t *lenp)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f)
		return -errno;
	do {
		if (len == cap) {
			char *nb = realloc(buf, cap = cap ? 2 * cap : 65536);

			if (!nb) {
				free(buf);
				fclose(f);
				return -ENOMEM;
			}
			buf = nb;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n);
	fclose(f);
	*bufp = buf;
	*lenp = len;
	return 0;
}

static int print_graph(const char *path)
{
	struct nrn_graph_info info;
	struct nrn_graph *g;
	char text[1024];
	size_t len = 0;
	void *buf = NULL;
	int ret;

	ret = read_file(path, &buf, &len);
	if (ret)
		return ret;
	ret = nrn_graph_deserialize(buf, len, &g);
	free(buf);
	if (ret)
		return ret;
	nrn_graph_info(g, &info);
	printf("%s: neuron graph, ISA %d, %u arguments, arena %llu bytes, constants %llu "
	       "bytes, %u instructions (%u captured, %u fused away)\n", path, NISA_ISA_VERSION,
	       info.nargs, (unsigned long long)info.arena_size,
	       (unsigned long long)info.const_size, info.insns, info.captured_insns, info.fused);
	for (unsigned int i = 0; i < info.nargs; i++) {
		uint32_t access = 0;
		uint64_t size = 0;

		nrn_graph_arg_access(g, i, &access, &size);
		printf("  arg%u: %llu bytes,%s%s\n", i, (unsigned long long)size,
		       access & NISA_ACCESS_READ ? " read" : "",
		       access & NISA_ACCESS_WRITE ? " written" : "");
	}
	for (unsigned int i = 0; i < info.insns; i++) {
		nrn_graph_insn_format(g, i, text, sizeof(text));
		printf("%6u: %s\n", i, text);
	}
	nrn_graph_destroy(g);
	return 0;
}

int main(int argc, char **argv)
{
	struct nrn_kernel *k;
	char text[1024];
	int ret;

	if (argc != 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fprintf(argc == 2 ? stdout : stderr,
			"usage: neuron-objdump FILE\n"
			"Print a compiled kernel (its slot count and each instruction) or a\n"
			"compiled graph (its arguments and each instruction, with the base of\n"
			"each operand and the captured instruction it came from).\n");
		return argc == 2 ? 0 : 2;
	}
	ret = nrn_kernel_load(argv[1], &k);
	if (ret == -EBADMSG || ret == -EINVAL) {
		int gret = print_graph(argv[1]);

		if (!gret)
			return 0;
		if (gret != -EBADMSG)
			ret = gret;
	}
	if (ret) {
		fprintf(stderr, "neuron-objdump: %s: %s\n", argv[1], nrn_strerror(ret));
		return 1;
	}
	printf("%s: neuron kernel, ISA %d, %u slots, %u instructions\n", argv[1],
	       NISA_ISA_VERSION, nrn_kernel_slots(k), nrn_kernel_count(k));
	for (unsigned int i = 0; i < nrn_kernel_count(k); i++) {
		nrn_insn_format(&nrn_kernel_insns(k)[i], text, sizeof(text));
		printf("%6u: %s\n", i, text);
	}
	nrn_kernel_destroy(k);
	return 0;
}
