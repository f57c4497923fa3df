/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the neuron kselftests: find the card's node, and thin
 * wrappers around the driver's and DRM's ioctls that return 0 or -errno.
 */
#ifndef NEURON_TEST_H
#define NEURON_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <drm.h>
#include <drm/neuron_accel.h>
#include <neuron_isa.h>

static inline int nt_ioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, req, arg);
	} while (ret == -1 && (errno == EINTR || errno == EAGAIN));
	return ret == -1 ? -errno : 0;
}

/* Open the first /dev/accel/accelN whose driver is neuron; -1 if none. */
static inline int nt_open(void)
{
	for (int i = 0; i < 64; i++) {
		char path[32], name[32] = "";
		struct drm_version v = { .name = name, .name_len = sizeof(name) - 1 };
		int fd;

		snprintf(path, sizeof(path), "/dev/accel/accel%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!nt_ioctl(fd, DRM_IOCTL_VERSION, &v) && !strcmp(name, "neuron"))
			return fd;
		close(fd);
	}
	return -1;
}

static inline int nt_param(int fd, uint32_t param, uint64_t *value)
{
	struct drm_neuron_get_param gp = { .param = param };
	int ret = nt_ioctl(fd, DRM_IOCTL_NEURON_GET_PARAM, &gp);

	*value = gp.value;
	return ret;
}

static inline int nt_bo_create(int fd, uint64_t size, uint32_t placement,
			       uint32_t *handle)
{
	struct drm_neuron_bo_create c = { .size = size, .placement = placement };
	int ret = nt_ioctl(fd, DRM_IOCTL_NEURON_BO_CREATE, &c);

	*handle = c.handle;
	return ret;
}

static inline int nt_bo_close(int fd, uint32_t handle)
{
	struct drm_gem_close c = { .handle = handle };

	return nt_ioctl(fd, DRM_IOCTL_GEM_CLOSE, &c);
}

/* Map a whole buffer; NULL on failure. */
static inline void *nt_bo_map(int fd, uint32_t handle, uint64_t *size)
{
	struct drm_neuron_bo_info info = { .handle = handle };
	void *p;

	if (nt_ioctl(fd, DRM_IOCTL_NEURON_BO_INFO, &info))
		return NULL;
	p = mmap(NULL, info.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 (off_t)info.mmap_offset);
	if (p == MAP_FAILED)
		return NULL;
	*size = info.size;
	return p;
}

static inline int nt_syncobj_create(int fd, uint32_t *handle)
{
	struct drm_syncobj_create c = { 0 };
	int ret = nt_ioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &c);

	*handle = c.handle;
	return ret;
}

static inline int nt_syncobj_destroy(int fd, uint32_t handle)
{
	struct drm_syncobj_destroy d = { .handle = handle };

	return nt_ioctl(fd, DRM_IOCTL_SYNCOBJ_DESTROY, &d);
}

/* Wait up to @ms for a binary syncobj (submitted or not yet). */
static inline int nt_syncobj_wait(int fd, uint32_t handle, int64_t ms)
{
	struct timespec now;
	struct drm_syncobj_wait w = {
		.handles = (uintptr_t)&handle,
		.count_handles = 1,
		.flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
	};

	clock_gettime(CLOCK_MONOTONIC, &now);
	w.timeout_nsec = now.tv_sec * 1000000000ll + now.tv_nsec + ms * 1000000ll;
	return nt_ioctl(fd, DRM_IOCTL_SYNCOBJ_WAIT, &w);
}

/* Submit @n copies on DMA queue @queue, signalling @out (0 for none). */
static inline int nt_submit_copies(int fd, uint32_t queue,
				   const struct drm_neuron_copy *copies,
				   uint32_t n, const struct drm_neuron_sync *in,
				   uint32_t nin, uint32_t out)
{
	struct drm_neuron_submit s = {
		.engine = DRM_NEURON_ENGINE_DMA,
		.index = queue,
		.copy_count = n,
		.copies = (uintptr_t)copies,
		.in_syncs = (uintptr_t)in,
		.in_sync_count = nin,
		.out_sync.handle = out,
	};

	return nt_ioctl(fd, DRM_IOCTL_NEURON_SUBMIT, &s);
}

/* Wait for (handle, point); returns the ioctl's result, status in *status. */
static inline int nt_wait(int fd, uint32_t handle, uint64_t point, int64_t ms,
			  int32_t *status, uint32_t *device_error)
{
	struct drm_neuron_wait w = { .handle = handle, .point = point,
				     .timeout_ns = ms < 0 ? -1 : ms * 1000000ll };
	int ret = nt_ioctl(fd, DRM_IOCTL_NEURON_WAIT, &w);

	if (status)
		*status = w.status;
	if (device_error)
		*device_error = w.device_error;
	return ret;
}

/* One copy of @size bytes on DMA queue 0, signalling @sync. */
static inline int nt_copy1(int fd, uint32_t src, uint64_t soff, uint32_t dst,
			   uint64_t doff, uint64_t size, uint32_t sync)
{
	struct drm_neuron_copy c = {
		.src_handle = src, .dst_handle = dst,
		.src_offset = soff, .dst_offset = doff, .size = size,
	};

	return nt_submit_copies(fd, 0, &c, 1, NULL, 0, sync);
}

/* The status of the job that signals @sync, waited for up to 20 s; 1 if none. */
static inline int32_t nt_wait_status(int fd, uint32_t sync)
{
	int32_t status = 1;

	if (nt_wait(fd, sync, 0, 20000, &status, NULL))
		return 1;
	return status;
}

/* Submit a kernel on core @core with @n buffers; in/out syncs optional. */
static inline int nt_submit_kernel(int fd, uint32_t core, uint32_t kbo,
				   uint64_t koff, uint64_t ksize,
				   const struct drm_neuron_bo_ref *bos, uint32_t n,
				   const struct drm_neuron_sync *in, uint32_t nin,
				   const struct drm_neuron_sync *out)
{
	struct drm_neuron_submit s = {
		.engine = DRM_NEURON_ENGINE_CORE, .index = core,
		.kernel_handle = kbo, .kernel_offset = koff, .kernel_size = ksize,
		.bos = (uintptr_t)bos, .bo_count = n,
		.in_syncs = (uintptr_t)in, .in_sync_count = nin,
	};

	if (out)
		s.out_sync = *out;
	return nt_ioctl(fd, DRM_IOCTL_NEURON_SUBMIT, &s);
}

/* A contiguous tensor operand. */
static inline struct nisa_tensor nt_tensor(unsigned int slot, unsigned int dtype,
					  uint64_t offset, uint32_t d0, uint32_t d1)
{
	struct nisa_tensor t = { .slot = slot, .dtype = dtype, .offset = offset };

	t.ndim = d1 ? 2 : 1;
	t.shape[0] = d0;
	t.strides[0] = d1 ? d1 : 1;
	if (d1) {
		t.shape[1] = d1;
		t.strides[1] = 1;
	}
	return t;
}

/* The accel minor of an open device file. */
static inline int nt_minor(int fd)
{
	struct stat st;

	return fstat(fd, &st) ? -1 : (int)minor(st.st_rdev);
}

/*
 * How many processes other than this one have @fd's card open (a process
 * whose /proc/PID/fd this one may not read is not counted); -1 if /proc
 * cannot be read.
 */
static inline int nt_other_users(int fd)
{
	char path[PATH_MAX];
	struct stat card, st;
	struct dirent *p, *f;
	int users = 0;
	DIR *proc, *fds;

	if (fstat(fd, &card))
		return -1;
	proc = opendir("/proc");
	if (!proc)
		return -1;
	while ((p = readdir(proc))) {
		char *end;
		long pid = strtol(p->d_name, &end, 10);

		if (*end || pid <= 0 || pid == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/fd", pid);
		fds = opendir(path);
		if (!fds)
			continue;	/* gone, or not ours to read */
		while ((f = readdir(fds))) {
			snprintf(path, sizeof(path), "/proc/%ld/fd/%s", pid, f->d_name);
			if (f->d_name[0] != '.' && !stat(path, &st) && S_ISCHR(st.st_mode) &&
			    st.st_rdev == card.st_rdev) {
				users++;
				break;
			}
		}
		closedir(fds);
	}
	closedir(proc);
	return users;
}

/*
 * In a FIXTURE_SETUP, after the card is open in @fd: skip (closing it) if
 * another process has the card open. For the tests that compare the card's
 * counters, set neuron.ko's parameters or inject faults into its queues:
 * another user's jobs would move the counters or fail through them.
 */
#define NT_NEED_CARD_ALONE(fd)							\
	do {									\
		int users_ = nt_other_users(fd);				\
										\
		if (users_ > 0) {						\
			close(fd);						\
			(fd) = -1;						\
			SKIP(return, "%d other process(es) have the card open;"	\
			     " these tests need it to themselves", users_);	\
		}								\
	} while (0)

/* The number a sysfs file starts with; -1 on error. */
static inline long long nt_read_number(const char *path)
{
	long long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* A counter of /sys/class/accel/accelN/device/neuron/<name>; -1 on error. */
static inline long long nt_counter(int fd, const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/class/accel/accel%d/device/neuron/%s",
		 nt_minor(fd), name);
	return nt_read_number(path);
}

/* A parameter of neuron.ko; -1 if it cannot be read. */
static inline long long nt_module_param(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/module/neuron/parameters/%s", name);
	return nt_read_number(path);
}

/* Set a (writable) parameter of neuron.ko; 0 or -errno. */
static inline int nt_set_module_param(const char *name, long long value)
{
	char path[128], val[32];
	int fd, n, ret = 0;

	snprintf(path, sizeof(path), "/sys/module/neuron/parameters/%s", name);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	n = snprintf(val, sizeof(val), "%lld", value);
	if (write(fd, val, (size_t)n) != n)
		ret = -errno;
	close(fd);
	return ret;
}

/* The number on the line "@key: N..." of file @path; -1 if absent. */
static inline long long nt_keyed_number(const char *path, const char *key)
{
	char line[256];
	size_t n = strlen(key);
	long long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':')
			v = strtoll(line + n + 1, NULL, 10);
	fclose(f);
	return v;
}

/* A line "@key: N kB" of /proc/meminfo, in KiB; -1 if absent. */
static inline long long nt_meminfo_kb(const char *key)
{
	return nt_keyed_number("/proc/meminfo", key);
}

/*
 * Wait up to @ms for the card's counter @name to read @want (jobs, and the
 * memory they pin, are freed shortly after they complete); its last value.
 */
static inline long long nt_counter_settle(int fd, const char *name,
					  long long want, int ms)
{
	long long v = nt_counter(fd, name);

	for (int i = 0; i < ms && v != want; i += 10) {
		usleep(10000);
		v = nt_counter(fd, name);
	}
	return v;
}

/* CLOCK_MONOTONIC, in milliseconds. */
static inline double nt_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The card's PCI address ("0000:01:00.0"), into @buf. */
static inline int nt_pci_address(int fd, char *buf, size_t size)
{
	char link[128], target[256];
	const char *base;
	ssize_t n;

	snprintf(link, sizeof(link), "/sys/class/accel/accel%d/device", nt_minor(fd));
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		return -errno;
	target[n] = '\0';
	base = strrchr(target, '/');
	snprintf(buf, size, "%.*s", (int)size - 1, base ? base + 1 : target);
	return 0;
}

/*
 * Interrupts taken so far by the card's vector named @name ("dma0",
 * "core1"...), over all CPUs, from /proc/interrupts; -1 on error.
 */
static inline long long nt_irq_count(int fd, const char *name)
{
	char pci[64], line[1024];
	long long total = -1;
	FILE *f;

	if (nt_pci_address(fd, pci, sizeof(pci)))
		return -1;
	f = fopen("/proc/interrupts", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = strchr(line, ':'), *end, *last;
		size_t n = strcspn(line, "\n");

		line[n] = '\0';
		last = strrchr(line, ' ');
		if (!p || !strstr(line, pci) || !last || strcmp(last + 1, name))
			continue;
		total = 0;
		for (p++;; p = end) {
			long long v = strtoll(p, &end, 10);

			if (end == p)
				break;
			total += v;
		}
	}
	fclose(f);
	return total;
}

/*
 * Jobs on the ring of the card's queue named @name ("dma0", "core1"...),
 * the driver's count (debugfs' queues file); -1 on error.
 */
static inline int nt_queue_inflight(int fd, const char *name)
{
	char path[128], pci[64], line[256], q[16];
	int n = -1, inflight;
	FILE *f;

	if (nt_pci_address(fd, pci, sizeof(pci)))
		return -1;
	snprintf(path, sizeof(path), "/sys/kernel/debug/accel/%s/queues", pci);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%15s %*u %*u %*u %*x %*u %*u %d", q, &inflight) == 2 &&
		    !strcmp(q, name))
			n = inflight;
	fclose(f);
	return n;
}

/* Write the card's fault-injection hook of queue @q (debugfs). */
static inline int nt_fault(int fd, unsigned int q, unsigned int bits)
{
	char path[128], val[32], pci[64];
	int dfd, n, ret = 0;

	ret = nt_pci_address(fd, pci, sizeof(pci));
	if (ret)
		return ret;
	snprintf(path, sizeof(path), "/sys/kernel/debug/accel/%s/fault_inject", pci);
	dfd = open(path, O_WRONLY);
	if (dfd < 0)
		return -errno;
	n = snprintf(val, sizeof(val), "%u %u", q, bits);
	if (write(dfd, val, (size_t)n) != n)
		ret = -errno;
	close(dfd);
	return ret;
}

static inline uint64_t nt_f64(double d)
{
	uint64_t u;

	memcpy(&u, &d, sizeof(u));
	return u;
}

#endif /* NEURON_TEST_H */
