// SPDX-License-Identifier: MIT
/*
 * neuron-top: live use of the neuron cards -- per card, memory and the
 * busy share of each DMA queue and NeuronCore (from sysfs); per process,
 * its engine time and memory (from DRM fdinfo). Refreshed in place every
 * second, or printed once with --once.
 */
#include <dirent.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libneuron.h"

#define MAX_CARDS 16
#define MAX_QUEUES 32
#define MAX_PROCS 256

struct card {
	char pci[32];
	unsigned long long mem_total, mem_used;
	unsigned long long busy[2][MAX_QUEUES];
	int nbusy[2];
};

struct proc {
	int pid;
	char comm[32];
	char pci[32];
	unsigned long long engine[2];
	unsigned long long mem[2];
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int read_file(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
	fclose(f);
	return 0;
}

static int read_cards(struct card *c)
{
	int n = nrn_device_count();

	for (int i = 0; i < n && i < MAX_CARDS; i++) {
		struct nrn_device_info info;
		struct nrn_device *dev;
		char path[PATH_MAX], buf[4096], *p;

		memset(&c[i], 0, sizeof(c[i]));
		if (nrn_device_open(i, &dev))
			continue;
		nrn_device_info(dev, &info);
		nrn_device_close(dev);
		snprintf(c[i].pci, sizeof(c[i].pci), "%s", info.pci_address);
		c[i].mem_total = info.mem_size;
		c[i].mem_used = info.mem_size - info.mem_free;
		for (int k = 0; k < 2; k++) {
			snprintf(path, sizeof(path), "/sys/class/accel/accel%u/device/neuron/%s",
				 info.minor, k ? "core_busy_ns" : "dma_busy_ns");
			if (read_file(path, buf, sizeof(buf)))
				continue;
			for (p = buf; c[i].nbusy[k] < MAX_QUEUES;) {
				char *end;
				unsigned long long v = strtoull(p, &end, 10);

				if (end == p)
					break;
				c[i].busy[k][c[i].nbusy[k]++] = v;
				p = end;
			}
		}
	}
	return n < 0 ? 0 : (n > MAX_CARDS ? MAX_CARDS : n);
}

/* Open neuron files of every process, from /proc/<pid>/fdinfo. */
static int read_procs(struct proc *ps)
{
	DIR *proc = opendir("/proc");
	struct dirent *de;
	int n = 0;

	if (!proc)
		return 0;
	while ((de = readdir(proc)) && n < MAX_PROCS) {
		char path[PATH_MAX], buf[4096];
		DIR *fds;
		struct dirent *fe;
		int pid = atoi(de->d_name);

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fdinfo", pid);
		fds = opendir(path);
		if (!fds)
			continue;
		while ((fe = readdir(fds))) {
			struct proc p = { .pid = pid };
			char *line;

			if (fe->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", pid, fe->d_name);
			if (read_file(path, buf, sizeof(buf)) || !strstr(buf, "drm-driver:\tneuron"))
				continue;
			for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
				unsigned long long v;

				if (sscanf(line, "drm-pdev:\t%31s", p.pci) == 1)
					continue;
				if (sscanf(line, "drm-engine-dma:\t%llu", &v) == 1)
					p.engine[0] = v;
				else if (sscanf(line, "drm-engine-core:\t%llu", &v) == 1)
					p.engine[1] = v;
				else if (sscanf(line, "drm-memory-device:\t%llu", &v) == 1)
					p.mem[0] = v;
				else if (sscanf(line, "drm-memory-host:\t%llu", &v) == 1)
					p.mem[1] = v;
			}
			snprintf(path, sizeof(path), "/proc/%d/comm", pid);
			if (!read_file(path, p.comm, sizeof(p.comm)))
				p.comm[strcspn(p.comm, "\n")] = '\0';
			/* Several files of one process: add them up. */
			if (n && ps[n - 1].pid == pid && !strcmp(ps[n - 1].pci, p.pci)) {
				for (int k = 0; k < 2; k++) {
					ps[n - 1].engine[k] += p.engine[k];
					ps[n - 1].mem[k] += p.mem[k];
				}
			} else if (n < MAX_PROCS) {
				ps[n++] = p;
			}
		}
		closedir(fds);
	}
	closedir(proc);
	return n;
}

static void show(struct card *c0, struct card *c1, int ncards, struct proc *p0, int np0,
		 struct proc *p1, int np1, double dt)
{
	printf("neuron-top  %d card(s), %.1f s sample\n\n", ncards, dt);
	for (int i = 0; i < ncards; i++) {
		printf("neuron%d %s  memory %llu/%llu MiB\n", i, c1[i].pci,
		       c1[i].mem_used >> 20, c1[i].mem_total >> 20);
		for (int k = 0; k < 2; k++) {
			printf("  %-5s", k ? "core" : "dma");
			for (int q = 0; q < c1[i].nbusy[k]; q++)
				printf(" %s%d %5.1f%%", k ? "c" : "q", q,
				       100.0 * (c1[i].busy[k][q] - c0[i].busy[k][q]) / (dt * 1e9));
			printf("\n");
		}
	}
	printf("\n%7s %-16s %-13s %7s %7s %10s %10s\n", "PID", "COMMAND", "CARD", "DMA%",
	       "CORE%", "DEV-MEM", "HOST-MEM");
	for (int i = 0; i < np1; i++) {
		double u[2] = { 0, 0 };

		for (int j = 0; j < np0; j++)
			if (p0[j].pid == p1[i].pid && !strcmp(p0[j].pci, p1[i].pci))
				for (int k = 0; k < 2; k++)
					u[k] = 100.0 * (p1[i].engine[k] - p0[j].engine[k]) / (dt * 1e9);
		printf("%7d %-16s %-13s %7.1f %7.1f %7llu KiB %7llu KiB\n", p1[i].pid,
		       p1[i].comm, p1[i].pci, u[0], u[1], p1[i].mem[0], p1[i].mem[1]);
	}
	fflush(stdout);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "once", no_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	static struct card c0[MAX_CARDS], c1[MAX_CARDS];
	static struct proc p0[MAX_PROCS], p1[MAX_PROCS];
	int once = 0, ch, n, np0, np1;
	double t0, t1;

	while ((ch = getopt_long(argc, argv, "oh", opts, NULL)) != -1) {
		if (ch == 'o') {
			once = 1;
		} else {
			printf("usage: neuron-top [--once]\n");
			return ch == 'h' ? 0 : 2;
		}
	}
	n = read_cards(c0);
	if (!n) {
		fprintf(stderr, "neuron-top: no neuron devices (is neuron.ko loaded?)\n");
		return 1;
	}
	np0 = read_procs(p0);
	t0 = now_s();
	for (;;) {
		usleep(once ? 500000 : 1000000);
		read_cards(c1);
		np1 = read_procs(p1);
		t1 = now_s();
		if (!once)
			printf("\033[H\033[2J");
		show(c0, c1, n, p0, np0, p1, np1, t1 - t0);
		if (once)
			return 0;
		memcpy(c0, c1, sizeof(c0));
		memcpy(p0, p1, sizeof(p0));
		np0 = np1;
		t0 = t1;
	}
}
