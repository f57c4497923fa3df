// SPDX-License-Identifier: GPL-2.0
/*
 * neuron.ko basics: parameters, buffer objects (create, info, mmap, close)
 * and DMA copies through SUBMIT with syncobjs. The bad inputs of each
 * ioctl come first; every test ends by checking the card still works.
 */
#include <stdlib.h>

#include "kselftest_harness.h"
#include "neuron_test.h"

FIXTURE(dev) {
	int fd;
};

FIXTURE_SETUP(dev)
{
	self->fd = nt_open();
	if (self->fd < 0)
		SKIP(return, "no neuron device (is neuron.ko loaded?)");
}

FIXTURE_TEARDOWN(dev)
{
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F(dev, get_param)
{
	struct drm_neuron_get_param gp = { .param = DRM_NEURON_PARAM_DEVICE_ID };
	uint64_t v, size, free_bytes;

	ASSERT_EQ(0, nt_param(self->fd, DRM_NEURON_PARAM_DEVICE_ID, &v));
	EXPECT_EQ(0x7e00, v);
	ASSERT_EQ(0, nt_param(self->fd, DRM_NEURON_PARAM_MODEL_VERSION, &v));
	EXPECT_EQ(1, v >> 16);
	ASSERT_EQ(0, nt_param(self->fd, DRM_NEURON_PARAM_NUM_DMA_QUEUES, &v));
	EXPECT_GE(v, 1);
	ASSERT_EQ(0, nt_param(self->fd, DRM_NEURON_PARAM_NUM_CORES, &v));
	EXPECT_GE(v, 1);
	ASSERT_EQ(0, nt_param(self->fd, DRM_NEURON_PARAM_CAPABILITIES, &v));
	EXPECT_TRUE(v & DRM_NEURON_CAP_DMA);
	ASSERT_EQ(0, nt_param(self->fd, DRM_NEURON_PARAM_MEM_SIZE, &size));
	ASSERT_EQ(0, nt_param(self->fd, DRM_NEURON_PARAM_MEM_FREE, &free_bytes));
	EXPECT_GE(size, 16 << 20);
	EXPECT_LE(free_bytes, size);

	EXPECT_EQ(-EINVAL, nt_param(self->fd, 9999, &v));
	gp.pad = 1;
	EXPECT_EQ(-EINVAL, nt_ioctl(self->fd, DRM_IOCTL_NEURON_GET_PARAM, &gp));
	EXPECT_EQ(-EFAULT, nt_ioctl(self->fd, DRM_IOCTL_NEURON_GET_PARAM, (void *)8));
}

TEST_F(dev, bo_create_bad)
{
	struct drm_neuron_bo_create c;
	uint64_t size;
	uint32_t h;

	ASSERT_EQ(0, nt_param(self->fd, DRM_NEURON_PARAM_MEM_SIZE, &size));
	EXPECT_EQ(-EINVAL, nt_bo_create(self->fd, 0, DRM_NEURON_BO_DEVICE, &h));
	EXPECT_EQ(-EINVAL, nt_bo_create(self->fd, 4096, 2, &h));
	/* Past the largest host buffer (see neuron_limits). */
	EXPECT_EQ(-E2BIG, nt_bo_create(self->fd, ~0ull, DRM_NEURON_BO_HOST, &h));
	EXPECT_EQ(-ENOMEM, nt_bo_create(self->fd, size + 4096, DRM_NEURON_BO_DEVICE, &h));
	c = (struct drm_neuron_bo_create){ .size = 4096, .flags = 1 };
	EXPECT_EQ(-EINVAL, nt_ioctl(self->fd, DRM_IOCTL_NEURON_BO_CREATE, &c));
	c = (struct drm_neuron_bo_create){ .size = 4096, .pad = 1 };
	EXPECT_EQ(-EINVAL, nt_ioctl(self->fd, DRM_IOCTL_NEURON_BO_CREATE, &c));
}

TEST_F(dev, bo_lifecycle)
{
	struct drm_neuron_bo_info info = { 0 };
	uint64_t free0, free1, mapped;
	uint32_t dh, hh;
	uint8_t *p;

	ASSERT_EQ(0, nt_param(self->fd, DRM_NEURON_PARAM_MEM_FREE, &free0));
	ASSERT_EQ(0, nt_bo_create(self->fd, 5000, DRM_NEURON_BO_DEVICE, &dh));
	ASSERT_EQ(0, nt_bo_create(self->fd, 5000, DRM_NEURON_BO_HOST, &hh));
	ASSERT_EQ(0, nt_param(self->fd, DRM_NEURON_PARAM_MEM_FREE, &free1));
	EXPECT_EQ(free0 - 8192, free1);

	info.handle = dh;
	ASSERT_EQ(0, nt_ioctl(self->fd, DRM_IOCTL_NEURON_BO_INFO, &info));
	EXPECT_EQ(8192, info.size);
	EXPECT_EQ(DRM_NEURON_BO_DEVICE, info.placement);
	EXPECT_NE(0, info.mmap_offset);
	info = (struct drm_neuron_bo_info){ .handle = hh };
	ASSERT_EQ(0, nt_ioctl(self->fd, DRM_IOCTL_NEURON_BO_INFO, &info));
	EXPECT_EQ(DRM_NEURON_BO_HOST, info.placement);
	info = (struct drm_neuron_bo_info){ .handle = 0xdead };
	EXPECT_EQ(-ENOENT, nt_ioctl(self->fd, DRM_IOCTL_NEURON_BO_INFO, &info));

	/* Device memory through BAR2: what is written reads back. */
	p = nt_bo_map(self->fd, dh, &mapped);
	ASSERT_NE(NULL, p);
	for (int i = 0; i < 8192; i++)
		p[i] = (uint8_t)(i * 7);
	for (int i = 0; i < 8192; i++)
		ASSERT_EQ((uint8_t)(i * 7), p[i]);
	munmap(p, mapped);
	/* A mapping larger than the buffer is refused. */
	info = (struct drm_neuron_bo_info){ .handle = dh };
	ASSERT_EQ(0, nt_ioctl(self->fd, DRM_IOCTL_NEURON_BO_INFO, &info));
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 3 * 4096, PROT_READ, MAP_SHARED, self->fd,
				   (off_t)info.mmap_offset));

	EXPECT_EQ(0, nt_bo_close(self->fd, dh));
	EXPECT_EQ(0, nt_bo_close(self->fd, hh));
	EXPECT_EQ(-EINVAL, nt_bo_close(self->fd, dh));
	ASSERT_EQ(0, nt_param(self->fd, DRM_NEURON_PARAM_MEM_FREE, &free1));
	EXPECT_EQ(free0, free1);
}

/* Host -> device -> host through two jobs chained by a syncobj. */
static void dma_roundtrip(struct __test_metadata *_metadata, int fd,
			  uint64_t size, uint64_t off)
{
	struct drm_neuron_copy c1, c2;
	struct drm_neuron_sync dep;
	uint32_t src, dev, dst, s1, s2;
	uint64_t ms, md;
	uint8_t *ps, *pd;

	ASSERT_EQ(0, nt_bo_create(fd, size + off, DRM_NEURON_BO_HOST, &src));
	ASSERT_EQ(0, nt_bo_create(fd, size + off, DRM_NEURON_BO_DEVICE, &dev));
	ASSERT_EQ(0, nt_bo_create(fd, size + off, DRM_NEURON_BO_HOST, &dst));
	ps = nt_bo_map(fd, src, &ms);
	pd = nt_bo_map(fd, dst, &md);
	ASSERT_NE(NULL, ps);
	ASSERT_NE(NULL, pd);
	for (uint64_t i = 0; i < size; i++)
		ps[off + i] = (uint8_t)(i * 13 + size);
	memset(pd, 0, md);

	ASSERT_EQ(0, nt_syncobj_create(fd, &s1));
	ASSERT_EQ(0, nt_syncobj_create(fd, &s2));
	c1 = (struct drm_neuron_copy){ .src_handle = src, .dst_handle = dev,
		.src_offset = off, .dst_offset = off, .size = size };
	c2 = (struct drm_neuron_copy){ .src_handle = dev, .dst_handle = dst,
		.src_offset = off, .dst_offset = off, .size = size };
	dep = (struct drm_neuron_sync){ .handle = s1 };
	ASSERT_EQ(0, nt_submit_copies(fd, 0, &c1, 1, NULL, 0, s1));
	ASSERT_EQ(0, nt_submit_copies(fd, 0, &c2, 1, &dep, 1, s2));
	ASSERT_EQ(0, nt_syncobj_wait(fd, s2, 10000));
	EXPECT_EQ(0, memcmp(ps + off, pd + off, size));

	munmap(ps, ms);
	munmap(pd, md);
	nt_syncobj_destroy(fd, s1);
	nt_syncobj_destroy(fd, s2);
	nt_bo_close(fd, src);
	nt_bo_close(fd, dev);
	nt_bo_close(fd, dst);
}

TEST_F(dev, dma_copy_sizes)
{
	static const uint64_t sizes[] = { 1, 100, 4096, 4097, 65536, 3 << 20 };
	static const uint64_t offs[] = { 0, 1, 4095 };

	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		for (unsigned int j = 0; j < sizeof(offs) / sizeof(offs[0]); j++)
			dma_roundtrip(_metadata, self->fd, sizes[i], offs[j]);
}

TEST_F(dev, submit_bad)
{
	struct drm_neuron_copy c = { .size = 4096 };
	struct drm_neuron_sync bad_sync = { .handle = 0xdead };
	struct drm_neuron_submit s;
	uint32_t a, b, sync;
	uint64_t ndma;

	ASSERT_EQ(0, nt_param(self->fd, DRM_NEURON_PARAM_NUM_DMA_QUEUES, &ndma));
	ASSERT_EQ(0, nt_bo_create(self->fd, 4096, DRM_NEURON_BO_DEVICE, &a));
	ASSERT_EQ(0, nt_bo_create(self->fd, 4096, DRM_NEURON_BO_HOST, &b));
	ASSERT_EQ(0, nt_syncobj_create(self->fd, &sync));
	c.src_handle = a;
	c.dst_handle = b;

	/* Bad handles, ranges and counts. */
	c.src_handle = 0xdead;
	EXPECT_EQ(-ENOENT, nt_submit_copies(self->fd, 0, &c, 1, NULL, 0, 0));
	c.src_handle = a;
	c.src_offset = 1;
	EXPECT_EQ(-EINVAL, nt_submit_copies(self->fd, 0, &c, 1, NULL, 0, 0));
	c.src_offset = ~0ull - 100;
	EXPECT_EQ(-EINVAL, nt_submit_copies(self->fd, 0, &c, 1, NULL, 0, 0));
	c.src_offset = 0;
	c.size = 0;
	EXPECT_EQ(-EINVAL, nt_submit_copies(self->fd, 0, &c, 1, NULL, 0, 0));
	c.size = 4096;
	EXPECT_EQ(-EINVAL, nt_submit_copies(self->fd, 0, &c, 0, NULL, 0, 0));
	EXPECT_EQ(-EINVAL, nt_submit_copies(self->fd, 0, &c,
					    DRM_NEURON_MAX_COPIES + 1, NULL, 0, 0));
	EXPECT_EQ(-EINVAL, nt_submit_copies(self->fd, (uint32_t)ndma, &c, 1,
					    NULL, 0, 0));
	EXPECT_EQ(-EFAULT, nt_submit_copies(self->fd, 0, (void *)16, 1, NULL, 0, 0));
	EXPECT_EQ(-ENOENT, nt_submit_copies(self->fd, 0, &c, 1, &bad_sync, 1, 0));
	EXPECT_EQ(-EFAULT, nt_submit_copies(self->fd, 0, &c, 1, (void *)16, 1, 0));
	EXPECT_EQ(-EINVAL, nt_submit_copies(self->fd, 0, &c, 1, &bad_sync,
					    DRM_NEURON_MAX_SYNCS + 1, 0));
	EXPECT_EQ(-ENOENT, nt_submit_copies(self->fd, 0, &c, 1, NULL, 0, 0xdead));

	/* Non-zero padding, flags and unknown engines. */
	s = (struct drm_neuron_submit){ .copy_count = 1, .copies = (uintptr_t)&c };
	s.flags = 1;
	EXPECT_EQ(-EINVAL, nt_ioctl(self->fd, DRM_IOCTL_NEURON_SUBMIT, &s));
	s.flags = 0;
	s.pad = 1;
	EXPECT_EQ(-EINVAL, nt_ioctl(self->fd, DRM_IOCTL_NEURON_SUBMIT, &s));
	s.pad = 0;
	s.out_sync.pad = 1;
	EXPECT_EQ(-EINVAL, nt_ioctl(self->fd, DRM_IOCTL_NEURON_SUBMIT, &s));
	s.out_sync.pad = 0;
	s.engine = 7;
	EXPECT_EQ(-EINVAL, nt_ioctl(self->fd, DRM_IOCTL_NEURON_SUBMIT, &s));

	/* After all that, a good copy still works. */
	EXPECT_EQ(0, nt_submit_copies(self->fd, 0, &c, 1, NULL, 0, sync));
	EXPECT_EQ(0, nt_syncobj_wait(self->fd, sync, 10000));
	nt_syncobj_destroy(self->fd, sync);
	nt_bo_close(self->fd, a);
	nt_bo_close(self->fd, b);
}

/* Handles are per open file: another file cannot name this one's buffers. */
TEST_F(dev, handles_per_file)
{
	struct drm_neuron_bo_info info = { 0 };
	int other = nt_open();
	uint32_t h;

	ASSERT_GE(other, 0);
	ASSERT_EQ(0, nt_bo_create(self->fd, 4096, DRM_NEURON_BO_DEVICE, &h));
	info.handle = h;
	EXPECT_EQ(-ENOENT, nt_ioctl(other, DRM_IOCTL_NEURON_BO_INFO, &info));
	close(other);
	nt_bo_close(self->fd, h);
}

/*
 * PRIME: a buffer exported as a dma-buf fd and imported by another file is
 * the same memory; without the fd, the other file cannot name it.
 */
TEST_F(dev, prime_share)
{
	struct drm_prime_handle exp = { .flags = DRM_CLOEXEC | DRM_RDWR };
	struct drm_prime_handle imp = { 0 };
	uint32_t placements[2] = { DRM_NEURON_BO_DEVICE, DRM_NEURON_BO_HOST };
	int other = nt_open();

	ASSERT_GE(other, 0);
	for (int i = 0; i < 2; i++) {
		uint64_t sz1 = 0, sz2 = 0;
		uint32_t *p1, *p2, h;

		ASSERT_EQ(0, nt_bo_create(self->fd, 8192, placements[i], &h));
		exp.handle = h;
		ASSERT_EQ(0, nt_ioctl(self->fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &exp));
		imp.fd = exp.fd;
		ASSERT_EQ(0, nt_ioctl(other, DRM_IOCTL_PRIME_FD_TO_HANDLE, &imp));
		p1 = nt_bo_map(self->fd, h, &sz1);
		p2 = nt_bo_map(other, imp.handle, &sz2);
		ASSERT_NE(NULL, p1);
		ASSERT_NE(NULL, p2);
		EXPECT_EQ(sz1, sz2);
		p1[100] = 0xfeed0000 + i;
		EXPECT_EQ(0xfeed0000 + i, p2[100]);
		munmap(p1, sz1);
		munmap(p2, sz2);
		close(exp.fd);
		nt_bo_close(other, imp.handle);
		nt_bo_close(self->fd, h);
	}
	/* A bad fd is refused. */
	imp.fd = 0x7fffffff;
	EXPECT_NE(0, nt_ioctl(other, DRM_IOCTL_PRIME_FD_TO_HANDLE, &imp));
	close(other);
}

TEST_HARNESS_MAIN
