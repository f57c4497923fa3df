// SPDX-License-Identifier: MIT
/* neuron-objdump: print a compiled kernel (the file format of libneuron) as text. */
#include <stdio.h>
#include <string.h>

#include "libneuron.h"

int main(int argc, char **argv)
{
	struct nrn_kernel *k;
	char text[1024];
	int ret;

	if (argc != 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fprintf(argc == 2 ? stdout : stderr,
			"usage: neuron-objdump KERNEL-FILE\n"
			"Print a compiled kernel: its slot count and each instruction.\n");
		return argc == 2 ? 0 : 2;
	}
	ret = nrn_kernel_load(argv[1], &k);
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
