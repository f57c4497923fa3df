// SPDX-License-Identifier: GPL-2.0
/*
 * A link's peer card removed (PCI remove through sysfs) while link jobs
 * write into it, then brought back by a bus rescan (issue 14). Needs two
 * linked cards; SKIPs with fewer. The card removed is the lower-numbered
 * one of the pair (the kselftests' card: make check runs its sweep on
 * card 1).
 */
#include <dirent.h>

#include "kselftest_harness.h"
#include "neuron_link.h"

/* The accel minor of the card at PCI address @pci; -1 if it has none. */
static int minor_of_pci(const char *pci)
{
	char path[160];
	DIR *d;
	struct dirent *e;
	int minor = -1;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/accel", pci);
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (sscanf(e->d_name, "accel%d", &minor) == 1)
			break;
	closedir(d);
	return minor;
}

/* Wait up to @ms for the card at @pci to have its device node: its minor. */
static int wait_minor(const char *pci, int ms)
{
	for (int i = 0; i < ms; i += 50) {
		int m = minor_of_pci(pci);

		if (m >= 0 && access("/dev/accel", F_OK) == 0) {
			char dev[32];

			snprintf(dev, sizeof(dev), "/dev/accel/accel%d", m);
			if (!access(dev, F_OK))
				return m;
		}
		usleep(50 * 1000);
	}
	return -1;
}

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * The peer card is removed (PCI remove through sysfs) while link jobs
 * write into it: they end with -ENODEV within a bounded time (the others
 * completed), a new one is refused with -ENOLINK, nothing hangs; after a
 * rescan the card is back and link copies into it work again. The card
 * removed is the lowest-numbered one of the pair (the kselftests' card:
 * make check runs its sweep on card 1).
 */
/*
 * Enough 64 MiB reductions that most are still queued when the removal
 * lands: about 1 s of link work on an idle host (16 once all completed
 * before a removal 0.2 s after them).
 */
#define UNPLUG_JOBS 64

TEST(peer_removed_during_link_jobs)
{
	struct card cards[MAX_CARDS], *a, *b, *gone, *live;
	int ncards = open_cards(cards), l;
	uint32_t src, dst, syncs[UNPLUG_JOBS];
	int64_t peer;
	char pci[64], path[160];
	int enodev = 0, ok = 0, minor;
	double t0;

	if (find_pair(cards, ncards, &a, &b) < 0)
		SKIP(return, "needs two linked neuron cards (%d cards found): "
		     "scripts/vm --cards 2", ncards);
	gone = nt_minor(a->fd) < nt_minor(b->fd) ? a : b;
	live = gone == a ? b : a;
	l = link_to(live, gone);
	ASSERT_LE(0, l);
	ASSERT_EQ(0, nt_pci_address(gone->fd, pci, sizeof(pci)));
	/* Big jobs on the live card's link into the card that goes. */
	ASSERT_EQ(0, nt_bo_create(live->fd, 64 << 20, DRM_NEURON_BO_DEVICE, &src));
	ASSERT_EQ(0, nt_bo_create(gone->fd, 64 << 20, DRM_NEURON_BO_DEVICE, &dst));
	peer = share_bo(gone->fd, live->fd, dst);
	ASSERT_LT(0, peer);
	for (int i = 0; i < UNPLUG_JOBS; i++) {
		struct drm_neuron_link_copy c = { .src_handle = src,
			.dst_handle = (uint32_t)peer, .size = 64 << 20,
			.reduce = NISA_REDUCE_SUM, .dtype = NISA_F32 };

		ASSERT_EQ(0, nt_syncobj_create(live->fd, &syncs[i]));
		ASSERT_EQ(0, link_submit(live->fd, l, &c, 1, NULL, 0, syncs[i]));
	}
	/* The first one has run: the others are running or queued. */
	{
		int32_t st = 1;

		ASSERT_EQ(0, nt_wait(live->fd, syncs[0], 0, 15000, &st, NULL));
		ASSERT_EQ(0, st);
	}
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/remove", pci);
	t0 = nt_now_ms();
	ASSERT_EQ(0, write_file(path, "1"));
	for (int i = 0; i < UNPLUG_JOBS; i++) {
		int32_t st = 1;

		ASSERT_EQ(0, nt_wait(live->fd, syncs[i], 0, 15000, &st, NULL))
			TH_LOG("job %d did not end", i);
		if (st == -ENODEV)
			enodev++;
		else if (!st)
			ok++;
		else
			TH_LOG("job %d: status %d", i, st);
		nt_syncobj_destroy(live->fd, syncs[i]);
	}
	TH_LOG("%d jobs completed, %d failed with -ENODEV, in %.0f ms", ok, enodev,
	       nt_now_ms() - t0);
	EXPECT_EQ(UNPLUG_JOBS, ok + enodev);
	EXPECT_LE(1, enodev);
	EXPECT_GT(15000, nt_now_ms() - t0);
	/* The peer is gone: its link is down, a new link job into it refused. */
	{
		uint64_t up = ~0ull;

		ASSERT_EQ(0, nt_param(live->fd, DRM_NEURON_PARAM_LINKS_UP, &up));
		EXPECT_FALSE(up & (1u << l));
	}
	{
		struct drm_neuron_link_copy c = { .src_handle = src,
			.dst_handle = (uint32_t)peer, .size = 64 };

		EXPECT_EQ(-ENOLINK, link_submit(live->fd, l, &c, 1, NULL, 0, 0));
	}
	/* The live card works on. */
	{
		struct drm_neuron_copy c = { .src_handle = src, .dst_handle = src,
					     .dst_offset = 4096, .size = 4096 };
		uint32_t s;
		int32_t st = 1;

		ASSERT_EQ(0, nt_syncobj_create(live->fd, &s));
		ASSERT_EQ(0, nt_submit_copies(live->fd, 0, &c, 1, NULL, 0, s));
		ASSERT_EQ(0, nt_wait(live->fd, s, 0, 10000, &st, NULL));
		EXPECT_EQ(0, st);
		nt_syncobj_destroy(live->fd, s);
	}
	/* Drop everything of the old card, then bring it back. */
	nt_bo_close(live->fd, (uint32_t)peer);
	close(gone->fd);
	gone->fd = -1;
	ASSERT_EQ(0, write_file("/sys/bus/pci/rescan", "1"));
	minor = wait_minor(pci, 10000);
	ASSERT_LE(0, minor);
	ASSERT_EQ(0, card_open_minor(minor, gone));
	ASSERT_EQ(l, link_to(live, gone));
	{
		uint64_t up = 0, sz;
		uint8_t *sp, *dp;
		uint32_t d2;
		struct drm_neuron_link_copy c = { .src_handle = src, .size = 4096 };

		for (int i = 0; i < 100 && !(up & (1u << l)); i++) {
			nt_param(live->fd, DRM_NEURON_PARAM_LINKS_UP, &up);
			usleep(20000);
		}
		EXPECT_TRUE(up & (1u << l));
		ASSERT_EQ(0, nt_bo_create(gone->fd, 4096, DRM_NEURON_BO_DEVICE, &d2));
		peer = share_bo(gone->fd, live->fd, d2);
		ASSERT_LT(0, peer);
		c.dst_handle = (uint32_t)peer;
		sp = nt_bo_map(live->fd, src, &sz);
		dp = nt_bo_map(gone->fd, d2, &sz);
		ASSERT_NE(NULL, sp);
		ASSERT_NE(NULL, dp);
		memset(sp, 0x5c, 4096);
		memset(dp, 0, 4096);
		ASSERT_EQ(0, link_copy_wait(live->fd, l, &c));
		EXPECT_EQ(0x5c, dp[0]);
		EXPECT_EQ(0x5c, dp[4095]);
		munmap(sp, 64 << 20);
		munmap(dp, 4096);
		nt_bo_close(live->fd, (uint32_t)peer);
		nt_bo_close(gone->fd, d2);
	}
	nt_bo_close(live->fd, src);
	for (int i = 0; i < ncards; i++)
		close(cards[i].fd);
}

TEST_HARNESS_MAIN
