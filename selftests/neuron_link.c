// SPDX-License-Identifier: GPL-2.0
/*
 * Card-to-card links (issue 14): the fabric and link parameters, link
 * copies and reductions into a peer card's buffer shared through PRIME
 * (a "peer buffer"), their argument checks, peer buffers refused by DMA
 * and compute jobs, syncobjs shared across cards as in-syncs (and a failed
 * job's error passed on across cards); neuron_link_unplug.c removes a peer
 * card while link jobs write into it. Needs two linked cards (scripts/vm
 * --cards 2 puts them in one fabric); SKIPs with fewer.
 */
#include <math.h>

#include "kselftest_harness.h"
#include "neuron_link.h"


FIXTURE(pair) {
	struct card cards[MAX_CARDS];
	int ncards;
	struct card *a, *b;	/* a's link @link ends at b */
	int link;
	uint32_t src, dst;	/* device buffers: src of a, dst of b */
	int64_t peer;		/* dst, imported into a */
	uint8_t *srcp, *dstp;
	uint64_t size;
};

#define BUF_SIZE	(1 << 20)

FIXTURE_SETUP(pair)
{
	uint64_t sz;

	self->ncards = open_cards(self->cards);
	self->link = find_pair(self->cards, self->ncards, &self->a, &self->b);
	if (self->link < 0)
		SKIP(return, "needs two linked neuron cards (%d cards found): "
		     "scripts/vm --cards 2", self->ncards);
	self->size = BUF_SIZE;
	ASSERT_EQ(0, nt_bo_create(self->a->fd, BUF_SIZE, DRM_NEURON_BO_DEVICE, &self->src));
	ASSERT_EQ(0, nt_bo_create(self->b->fd, BUF_SIZE, DRM_NEURON_BO_DEVICE, &self->dst));
	self->peer = share_bo(self->b->fd, self->a->fd, self->dst);
	ASSERT_LT(0, self->peer);
	self->srcp = nt_bo_map(self->a->fd, self->src, &sz);
	ASSERT_NE(NULL, self->srcp);
	self->dstp = nt_bo_map(self->b->fd, self->dst, &sz);
	ASSERT_NE(NULL, self->dstp);
}

FIXTURE_TEARDOWN(pair)
{
	if (self->a) {
		munmap(self->srcp, BUF_SIZE);
		munmap(self->dstp, BUF_SIZE);
	}
	for (int i = 0; i < self->ncards; i++)
		close(self->cards[i].fd);
}

/* The parameters describe one fabric, consistently with sysfs. */
TEST_F(pair, params_and_topology)
{
	uint64_t caps, up, fabric_size = (self->a->fabric >> 8) & 0xff;
	char path[128], line[256];
	FILE *f;

	ASSERT_EQ(0, nt_param(self->a->fd, DRM_NEURON_PARAM_CAPABILITIES, &caps));
	EXPECT_TRUE(caps & DRM_NEURON_CAP_LINK);
	EXPECT_NE(0, self->a->fabric >> 16);
	EXPECT_EQ(self->a->fabric >> 16, self->b->fabric >> 16);
	EXPECT_LE(2, fabric_size);
	EXPECT_NE(rank_of(self->a), rank_of(self->b));
	EXPECT_LT(rank_of(self->a), fabric_size);
	EXPECT_LE(1, self->a->nlinks);
	EXPECT_GE(6, self->a->nlinks);
	for (unsigned int l = 0; l < self->a->nlinks; l++)
		EXPECT_LT((self->a->peers >> (8 * l)) & 0xff, fabric_size);
	EXPECT_EQ(0, self->a->peers >> (8 * self->a->nlinks));
	ASSERT_EQ(0, nt_param(self->a->fd, DRM_NEURON_PARAM_LINKS_UP, &up));
	EXPECT_TRUE(up & (1u << self->link));
	EXPECT_EQ(0, up >> self->a->nlinks);

	/* sysfs: "<peer>:<up|down>" per link, and the fabric. */
	snprintf(path, sizeof(path), "/sys/class/accel/accel%d/device/neuron/links",
		 nt_minor(self->a->fd));
	f = fopen(path, "r");
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(line, sizeof(line), f));
	fclose(f);
	for (unsigned int l = 0, pos = 0; l < self->a->nlinks; l++) {
		unsigned int peer;
		char state[8];
		int n;

		ASSERT_EQ(2, sscanf(line + pos, "%u:%7[a-z]%n", &peer, state, &n));
		EXPECT_EQ((self->a->peers >> (8 * l)) & 0xff, peer);
		EXPECT_STREQ(up & (1u << l) ? "up" : "down", state);
		pos += n;
	}
	snprintf(path, sizeof(path), "/sys/class/accel/accel%d/device/neuron/fabric",
		 nt_minor(self->a->fd));
	EXPECT_EQ((long long)(self->a->fabric >> 16), nt_read_number(path));
	/* Out-of-range link index. */
	{
		struct drm_neuron_link_copy c = { .src_handle = self->src,
			.dst_handle = (uint32_t)self->peer, .size = 64 };

		EXPECT_EQ(-EINVAL, link_submit(self->a->fd, self->a->nlinks, &c, 1,
					       NULL, 0, 0));
	}
}

/* A copy lands in the peer card's buffer, exactly there. */
TEST_F(pair, copy_data)
{
	struct drm_neuron_link_copy c = {
		.src_handle = self->src, .dst_handle = (uint32_t)self->peer,
		.src_offset = 4096, .dst_offset = 8192 + 64, .size = 300000,
	};
	char path[64];

	for (uint64_t i = 0; i < BUF_SIZE; i++)
		self->srcp[i] = (uint8_t)(i * 7 + 3);
	memset(self->dstp, 0xa5, BUF_SIZE);
	ASSERT_EQ(0, link_copy_wait(self->a->fd, self->link, &c));
	for (uint64_t i = 0; i < BUF_SIZE; i++) {
		uint8_t want = 0xa5;

		if (i >= c.dst_offset && i < c.dst_offset + c.size)
			want = (uint8_t)((i - c.dst_offset + c.src_offset) * 7 + 3);
		if (self->dstp[i] != want) {
			ASSERT_EQ(want, self->dstp[i]) TH_LOG("byte %llu", (unsigned long long)i);
		}
	}
	/* Several copies in one job, and the link engine's busy time. */
	{
		struct drm_neuron_link_copy cs[3];

		for (int i = 0; i < 3; i++)
			cs[i] = (struct drm_neuron_link_copy){ .src_handle = self->src,
				.dst_handle = (uint32_t)self->peer, .src_offset = i * 1000,
				.dst_offset = 500000 + i * 4096, .size = 1000 };
		uint32_t sync;
		int32_t st = -1;

		ASSERT_EQ(0, nt_syncobj_create(self->a->fd, &sync));
		ASSERT_EQ(0, link_submit(self->a->fd, self->link, cs, 3, NULL, 0, sync));
		ASSERT_EQ(0, nt_wait(self->a->fd, sync, 0, 20000, &st, NULL));
		EXPECT_EQ(0, st);
		for (int i = 0; i < 3; i++)
			EXPECT_EQ(0, memcmp(self->dstp + 500000 + i * 4096,
					    self->srcp + i * 1000, 1000));
		nt_syncobj_destroy(self->a->fd, sync);
	}
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", self->a->fd);
	EXPECT_LT(0, nt_keyed_number(path, "drm-engine-link"));
	EXPECT_EQ((long long)self->a->nlinks,
		  nt_keyed_number(path, "drm-engine-capacity-link"));
}

static uint16_t to_bf16(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u >> 16;
}

static float from_bf16(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;

	memcpy(&f, &u, 4);
	return f;
}

/* Each reduction of each dtype on values every dtype holds exactly. */
TEST_F(pair, reduce_ops)
{
	static const float src[] = { 1, -2, 3.5f, 0.25f, 8, -0.5f, 6, 0 };
	static const float dst[] = { 2, 5, -1, 0.5f, -3, -0.75f, 6, -4 };
	static const unsigned int dtypes[] = { NISA_F32, NISA_BF16, NISA_F16 };
	const int n = 8;

	for (unsigned int op = NISA_REDUCE_SUM; op <= NISA_REDUCE_MIN; op++)
		for (int d = 0; d < 3; d++) {
			unsigned int dt = dtypes[d], es = dt == NISA_F32 ? 4 : 2;
			struct drm_neuron_link_copy c = {
				.src_handle = self->src, .dst_handle = (uint32_t)self->peer,
				.src_offset = 64, .dst_offset = 128, .size = n * es,
				.reduce = op, .dtype = dt,
			};

			for (int i = 0; i < n; i++) {
				float fs = src[i], fd = dst[i];
				uint16_t hs, hd;

				if (dt == NISA_F32) {
					memcpy(self->srcp + 64 + 4 * i, &fs, 4);
					memcpy(self->dstp + 128 + 4 * i, &fd, 4);
					continue;
				}
				if (dt == NISA_BF16) {
					hs = to_bf16(fs);
					hd = to_bf16(fd);
				} else {
					_Float16 a = (_Float16)fs, b = (_Float16)fd;

					memcpy(&hs, &a, 2);
					memcpy(&hd, &b, 2);
				}
				memcpy(self->srcp + 64 + 2 * i, &hs, 2);
				memcpy(self->dstp + 128 + 2 * i, &hd, 2);
			}
			ASSERT_EQ(0, link_copy_wait(self->a->fd, self->link, &c))
				TH_LOG("op %u dtype %u", op, dt);
			for (int i = 0; i < n; i++) {
				float want, got;
				uint16_t h;

				switch (op) {
				case NISA_REDUCE_SUM: want = dst[i] + src[i]; break;
				case NISA_REDUCE_PROD: want = dst[i] * src[i]; break;
				case NISA_REDUCE_MAX: want = fmaxf(dst[i], src[i]); break;
				default: want = fminf(dst[i], src[i]); break;
				}
				if (dt == NISA_F32) {
					memcpy(&got, self->dstp + 128 + 4 * i, 4);
				} else {
					memcpy(&h, self->dstp + 128 + 2 * i, 2);
					if (dt == NISA_BF16) {
						got = from_bf16(h);
					} else {
						_Float16 x;

						memcpy(&x, &h, 2);
						got = (float)x;
					}
				}
				EXPECT_EQ(want, got) TH_LOG("op %u dtype %u element %d", op, dt, i);
			}
		}
	/* NaN propagates through MAX and MIN (the ISA's MAXIMUM/MINIMUM). */
	for (unsigned int op = NISA_REDUCE_MAX; op <= NISA_REDUCE_MIN; op++) {
		struct drm_neuron_link_copy c = {
			.src_handle = self->src, .dst_handle = (uint32_t)self->peer,
			.size = 8, .reduce = op, .dtype = NISA_F32,
		};
		float s[2] = { NAN, 1 }, dd[2] = { 1, NAN }, got[2];

		memcpy(self->srcp, s, 8);
		memcpy(self->dstp, dd, 8);
		ASSERT_EQ(0, link_copy_wait(self->a->fd, self->link, &c));
		memcpy(got, self->dstp, 8);
		EXPECT_TRUE(isnan(got[0]));
		EXPECT_TRUE(isnan(got[1]));
	}
}

/* Bad arguments: -EINVAL, -EXDEV, -ENOENT, as the uAPI says. */
TEST_F(pair, bad_arguments)
{
	int fd = self->a->fd, l = self->link;
	uint32_t host, local;
	const struct drm_neuron_link_copy good = {
		.src_handle = self->src, .dst_handle = (uint32_t)self->peer, .size = 64,
	};
	struct drm_neuron_link_copy c;
	struct drm_neuron_submit s;

#define TRY(err, field, value) do { \
		c = good; \
		c.field = value; \
		EXPECT_EQ(err, link_submit(fd, l, &c, 1, NULL, 0, 0)) \
			TH_LOG(#field " = " #value); \
	} while (0)

	ASSERT_EQ(0, link_submit(fd, l, &good, 1, NULL, 0, 0));
	TRY(-EINVAL, size, 0);
	TRY(-EINVAL, size, BUF_SIZE + 1);
	TRY(-EINVAL, src_offset, BUF_SIZE - 63);
	TRY(-EINVAL, dst_offset, BUF_SIZE - 63);
	TRY(-EINVAL, src_offset, UINT64_MAX - 10);
	TRY(-EINVAL, reduce, NISA_NUM_LINK_REDUCE);
	TRY(-EINVAL, dtype, NISA_BF16);		/* dtype with REDUCE_NONE */
	c = good;
	c.reduce = NISA_REDUCE_SUM;
	c.dtype = NISA_I32;
	EXPECT_EQ(-EINVAL, link_submit(fd, l, &c, 1, NULL, 0, 0));
	c.dtype = NISA_F32;
	EXPECT_EQ(0, link_submit(fd, l, &c, 1, NULL, 0, 0));
	c.size = 62;
	EXPECT_EQ(-EINVAL, link_submit(fd, l, &c, 1, NULL, 0, 0));
	c.size = 64;
	c.dst_offset = 2;
	EXPECT_EQ(-EINVAL, link_submit(fd, l, &c, 1, NULL, 0, 0));
	c.dtype = NISA_F16;
	EXPECT_EQ(0, link_submit(fd, l, &c, 1, NULL, 0, 0));
	TRY(-ENOENT, src_handle, 0x7777);
	TRY(-ENOENT, dst_handle, 0x7777);

	/* The source must be this card's device buffer, the destination a peer's. */
	ASSERT_EQ(0, nt_bo_create(fd, 4096, DRM_NEURON_BO_HOST, &host));
	ASSERT_EQ(0, nt_bo_create(fd, 4096, DRM_NEURON_BO_DEVICE, &local));
	TRY(-EXDEV, src_handle, host);
	TRY(-EXDEV, src_handle, (uint32_t)self->peer);
	TRY(-EXDEV, dst_handle, local);
	TRY(-EXDEV, dst_handle, host);
	TRY(-EXDEV, dst_handle, self->src);

	/* Submit fields of other engines, counts. */
	memset(&s, 0, sizeof(s));
	s.engine = DRM_NEURON_ENGINE_LINK;
	s.index = l;
	s.copies = (uintptr_t)&good;
	s.copy_count = 0;
	EXPECT_EQ(-EINVAL, nt_ioctl(fd, DRM_IOCTL_NEURON_SUBMIT, &s));
	s.copy_count = DRM_NEURON_MAX_COPIES + 1;
	EXPECT_EQ(-EINVAL, nt_ioctl(fd, DRM_IOCTL_NEURON_SUBMIT, &s));
	s.copy_count = 1;
	s.kernel_size = 64;
	EXPECT_EQ(-EINVAL, nt_ioctl(fd, DRM_IOCTL_NEURON_SUBMIT, &s));
	s.kernel_size = 0;
	s.copies = 16;
	EXPECT_EQ(-EFAULT, nt_ioctl(fd, DRM_IOCTL_NEURON_SUBMIT, &s));

	/* A link to another card than the buffer's, when there is one. */
	for (unsigned int ol = 0; ol < self->a->nlinks; ol++) {
		if (((self->a->peers >> (8 * ol)) & 0xff) == rank_of(self->b))
			continue;
		EXPECT_EQ(-EXDEV, link_submit(fd, ol, &good, 1, NULL, 0, 0));
	}
	nt_bo_close(fd, host);
	nt_bo_close(fd, local);
#undef TRY
}

/* A peer buffer is a link destination only: DMA and compute jobs refuse it. */
TEST_F(pair, peer_bo_refused_elsewhere)
{
	int fd = self->a->fd;
	struct drm_neuron_copy c = { .src_handle = self->src, .dst_handle = (uint32_t)self->peer,
				     .size = 64 };
	struct drm_neuron_bo_info info = { .handle = (uint32_t)self->peer };
	struct drm_neuron_bo_ref ref = { .handle = (uint32_t)self->peer,
					 .access = DRM_NEURON_ACCESS_READ };
	uint32_t kbo;
	void *p;
	int err;

	EXPECT_EQ(-EXDEV, nt_submit_copies(fd, 0, &c, 1, NULL, 0, 0));
	c.src_handle = (uint32_t)self->peer;
	c.dst_handle = self->src;
	EXPECT_EQ(-EXDEV, nt_submit_copies(fd, 0, &c, 1, NULL, 0, 0));
	ASSERT_EQ(0, nt_bo_create(fd, 4096, DRM_NEURON_BO_DEVICE, &kbo));
	if (self->a->cores) {
		EXPECT_EQ(-EXDEV, nt_submit_kernel(fd, 0, kbo, 0, sizeof(struct nisa_insn),
						   &ref, 1, NULL, 0, NULL));
		EXPECT_EQ(-EXDEV, nt_submit_kernel(fd, 0, (uint32_t)self->peer, 0,
						   sizeof(struct nisa_insn), NULL, 0, NULL, 0,
						   NULL));
	}
	/* Described as device memory of its size, but not mappable. */
	ASSERT_EQ(0, nt_ioctl(fd, DRM_IOCTL_NEURON_BO_INFO, &info));
	EXPECT_EQ(DRM_NEURON_BO_DEVICE, info.placement);
	EXPECT_EQ(BUF_SIZE, info.size);
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, (off_t)info.mmap_offset);
	err = p == MAP_FAILED ? errno : 0;
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EOPNOTSUPP, err);
	/* Imported again: the same handle; on its own card: the same object. */
	EXPECT_EQ(self->peer, share_bo(self->b->fd, fd, self->dst));
	{
		int64_t h = share_bo(self->b->fd, self->b->fd, self->dst);

		EXPECT_EQ((int64_t)self->dst, h);
	}
	nt_bo_close(fd, kbo);
}

/*
 * A peer buffer keeps the exporter's memory allocated: the exporting file
 * may close its handle and itself, the memory stays its buffer's (link
 * copies into it still work) until the importer lets go. The exporter is
 * the lower-numbered card (the kselftests' card: make check's sweep uses
 * card 1's memory meanwhile).
 */
TEST_F(pair, peer_bo_keeps_exporter_memory)
{
	struct card *exp = nt_minor(self->a->fd) < nt_minor(self->b->fd) ? self->a : self->b;
	struct card *imp = exp == self->a ? self->b : self->a;
	int l = link_to(imp, exp), fd, minor = nt_minor(exp->fd);
	long long before, with;
	char path[32];
	uint32_t h, src;
	int64_t peer;

	ASSERT_LE(0, l);
	snprintf(path, sizeof(path), "/dev/accel/accel%d", minor);
	fd = open(path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	before = nt_counter(exp->fd, "mem_used");
	ASSERT_EQ(0, nt_bo_create(fd, 4 << 20, DRM_NEURON_BO_DEVICE, &h));
	with = nt_counter(exp->fd, "mem_used");
	EXPECT_EQ(before + (4 << 20), with);
	peer = share_bo(fd, imp->fd, h);
	ASSERT_LT(0, peer);
	nt_bo_close(fd, h);
	close(fd);
	/* Still allocated, still usable as a destination. */
	EXPECT_EQ(with, nt_counter(exp->fd, "mem_used"));
	ASSERT_EQ(0, nt_bo_create(imp->fd, 4 << 20, DRM_NEURON_BO_DEVICE, &src));
	{
		struct drm_neuron_link_copy c = { .src_handle = src,
			.dst_handle = (uint32_t)peer, .size = 4 << 20 };

		EXPECT_EQ(0, link_copy_wait(imp->fd, l, &c));
	}
	EXPECT_EQ(with, nt_counter(exp->fd, "mem_used"));
	/* The importer lets go (jobs freed shortly after they complete). */
	nt_bo_close(imp->fd, (uint32_t)peer);
	nt_bo_close(imp->fd, src);
	EXPECT_EQ(before, nt_counter_settle(exp->fd, "mem_used", before, 2000));
}

/*
 * A job of card b waits for a link job of card a through a syncobj shared
 * across the cards: b copies what a's link job wrote, after it wrote it.
 * Then a's job fails (fault injection): b's job does not run and fails
 * with the same error and device error.
 */
TEST_F(pair, cross_card_in_sync)
{
	struct drm_neuron_link_copy lc = {
		.src_handle = self->src, .dst_handle = (uint32_t)self->peer,
		.size = BUF_SIZE,
	};
	uint32_t sa, sb_out, copy_dst;
	int64_t sb;
	struct drm_neuron_copy dc;
	struct drm_neuron_sync in;
	int32_t st, sta;
	uint32_t derr, derra;
	uint64_t sz;
	uint8_t *cp;
	int q, ret;

	ASSERT_EQ(0, nt_bo_create(self->b->fd, BUF_SIZE, DRM_NEURON_BO_DEVICE, &copy_dst));
	cp = nt_bo_map(self->b->fd, copy_dst, &sz);
	ASSERT_NE(NULL, cp);
	ASSERT_EQ(0, nt_syncobj_create(self->a->fd, &sa));
	ASSERT_EQ(0, nt_syncobj_create(self->b->fd, &sb_out));
	for (int round = 0; round < 3; round++) {
		memset(self->srcp, 0x30 + round, BUF_SIZE);
		memset(self->dstp, 0, BUF_SIZE);
		memset(cp, 0xee, BUF_SIZE);
		/* Several link jobs: the last one's fence is what b waits for. */
		for (int i = 0; i < 4; i++)
			ASSERT_EQ(0, link_submit(self->a->fd, self->link, &lc, 1, NULL, 0, sa));
		sb = share_syncobj(self->a->fd, sa, self->b->fd);
		ASSERT_LT(0, sb);
		in = (struct drm_neuron_sync){ .handle = (uint32_t)sb };
		dc = (struct drm_neuron_copy){ .src_handle = self->dst, .dst_handle = copy_dst,
					       .size = BUF_SIZE };
		ASSERT_EQ(0, nt_submit_copies(self->b->fd, 0, &dc, 1, &in, 1, sb_out));
		ASSERT_EQ(0, nt_wait(self->b->fd, sb_out, 0, 30000, &st, NULL));
		EXPECT_EQ(0, st);
		/* a's job had completed: b's fence signalled after it. */
		ASSERT_EQ(0, nt_wait(self->a->fd, sa, 0, 0, &sta, NULL));
		for (uint64_t i = 0; i < BUF_SIZE; i += 4093) {
			ASSERT_EQ(0x30 + round, cp[i]) TH_LOG("round %d byte %llu", round,
							      (unsigned long long)i);
		}
		nt_syncobj_destroy(self->b->fd, (uint32_t)sb);
	}

	/* a's next link job fails: b's dependent job fails the same way. */
	q = (int)(self->a->queues_dma + self->a->cores + self->link);
	ret = nt_fault(self->a->fd, q, FAULT_FAIL_NEXT);
	if (ret == -EOPNOTSUPP || ret == -ENOENT) {
		SKIP(goto out, "no fault injection (%d): error propagation not tested", ret);
	}
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, link_submit(self->a->fd, self->link, &lc, 1, NULL, 0, sa));
	sb = share_syncobj(self->a->fd, sa, self->b->fd);
	ASSERT_LT(0, sb);
	in = (struct drm_neuron_sync){ .handle = (uint32_t)sb };
	memset(cp, 0xee, BUF_SIZE);
	ASSERT_EQ(0, nt_submit_copies(self->b->fd, 0, &dc, 1, &in, 1, sb_out));
	ASSERT_EQ(0, nt_wait(self->a->fd, sa, 0, 20000, &sta, &derra));
	EXPECT_EQ(-EIO, sta);
	EXPECT_NE(0, derra);
	ASSERT_EQ(0, nt_wait(self->b->fd, sb_out, 0, 20000, &st, &derr));
	EXPECT_EQ(sta, st);
	EXPECT_EQ(derra, derr);
	/* It did not run: its destination is untouched. */
	EXPECT_EQ(0xee, cp[0]);
	EXPECT_EQ(0xee, cp[BUF_SIZE - 1]);
	nt_syncobj_destroy(self->b->fd, (uint32_t)sb);
out:
	munmap(cp, BUF_SIZE);
	nt_syncobj_destroy(self->a->fd, sa);
	nt_syncobj_destroy(self->b->fd, sb_out);
	nt_bo_close(self->b->fd, copy_dst);
}

TEST_HARNESS_MAIN
