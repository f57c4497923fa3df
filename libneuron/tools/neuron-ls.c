// SPDX-License-Identifier: MIT
/* neuron-ls: list the neuron cards, one line each (or --json). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libneuron.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: neuron-ls [--json]\n"
		"List the virtual Trainium cards driven by neuron.ko.\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	int json = 0, n, i, c, ret = 0;

	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	n = nrn_device_count();
	if (json)
		printf("[");
	else if (n == 0)
		fprintf(stderr, "neuron-ls: no neuron devices (is neuron.ko loaded?)\n");
	for (i = 0; i < n; i++) {
		struct nrn_device_info info;
		struct nrn_device *dev;
		uint64_t used;

		ret = nrn_device_open(i, &dev);
		if (!ret) {
			ret = nrn_device_info(dev, &info);
			nrn_device_close(dev);
		}
		if (ret) {
			fprintf(stderr, "neuron-ls: device %d: %s\n", i, nrn_strerror(ret));
			break;
		}
		used = info.mem_size - info.mem_free;
		if (json) {
			printf("%s\n  {\"index\": %u, \"node\": \"/dev/accel/accel%u\", "
			       "\"pci\": \"%s\", \"cores\": %u, \"dma_queues\": %u, "
			       "\"mem_total\": %llu, \"mem_used\": %llu, "
			       "\"model\": \"%u.%u\", \"driver\": \"%s\", "
			       "\"driver_version\": \"%s\"}", i ? "," : "",
			       info.index, info.minor, info.pci_address, info.num_cores,
			       info.num_dma_queues, (unsigned long long)info.mem_size,
			       (unsigned long long)used, info.model_version >> 16,
			       info.model_version & 0xffff, info.driver,
			       info.driver_version);
		} else {
			printf("neuron%u  %s  accel%u  cores %u  dma %u  memory %llu/%llu MiB  "
			       "model %u.%u  driver %s %s\n", info.index,
			       info.pci_address, info.minor, info.num_cores,
			       info.num_dma_queues, (unsigned long long)(used >> 20),
			       (unsigned long long)(info.mem_size >> 20),
			       info.model_version >> 16, info.model_version & 0xffff,
			       info.driver, info.driver_version);
		}
	}
	if (json)
		printf("%s]\n", n ? "\n" : "");
	return ret ? 1 : 0;
}
