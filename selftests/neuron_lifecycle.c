// SPDX-License-Identifier: GPL-2.0
/*
 * Lifecycle: unload and reload neuron.ko several times; remove the card
 * while a process has jobs in flight -- through sysfs (PCI remove) and as a
 * hot-unplug (device_del over QMP) -- its calls then fail with -ENODEV and
 * nothing oopses; bring the card back (bus rescan, device_add) and use it.
 *
 * Runs as root with the module's path in $NEURON_KO (and its parameters in
 * $NEURON_KO_ARGS); leaves it loaded.
 */
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "neuron_test.h"

static int load(void)
{
	const char *ko = getenv("NEURON_KO"), *args = getenv("NEURON_KO_ARGS");
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "insmod %s %s", ko ? ko : "neuron.ko", args ? args : "");
	return system(cmd);
}

/*
 * Walk the cards (the VM of make check has two: one going away leaves the
 * other). With @pci set: open the card at that PCI address, -1 when there
 * is none. With @lowest set: the lowest card address into it ("" when
 * there is no card), which is scripts/vm's first card, trn0 (its root
 * port comes first).
 */
static int find_card(const char *pci, char *lowest, size_t len)
{
	if (lowest)
		lowest[0] = 0;
	for (int i = 0; i < 64; i++) {
		char path[32], addr[64];
		int fd;

		snprintf(path, sizeof(path), "/dev/accel/accel%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!nt_pci_address(fd, addr, sizeof(addr))) {
			if (pci && !strcmp(addr, pci))
				return fd;
			if (lowest && (!lowest[0] || strcmp(addr, lowest) < 0))
				snprintf(lowest, len, "%s", addr);
		}
		close(fd);
	}
	return -1;
}

static int open_at(const char *pci)
{
	return find_card(pci, NULL, 0);
}

static void first_card(char *pci, size_t len)
{
	find_card(NULL, pci, len);
}

/* Wait up to @ms for the card at @pci to be there (@present) or gone. */
static int wait_card(const char *pci, int present, int ms)
{
	for (int t = 0; t <= ms; t += 50) {
		int fd = open_at(pci);

		if (fd >= 0)
			close(fd);
		if ((fd >= 0) == present)
			return 1;
		usleep(50 * 1000);
	}
	return 0;
}

/* One DMA round trip on a fresh file: the card at @pci works. */
static int card_works(const char *pci)
{
	struct drm_neuron_copy c = { .size = 4096 };
	int fd = open_at(pci), ok = 0;
	uint32_t a, b, s;
	int32_t status;

	if (fd < 0)
		return 0;
	if (!nt_bo_create(fd, 4096, DRM_NEURON_BO_HOST, &a) &&
	    !nt_bo_create(fd, 4096, DRM_NEURON_BO_DEVICE, &b) && !nt_syncobj_create(fd, &s)) {
		c.src_handle = a;
		c.dst_handle = b;
		ok = !nt_submit_copies(fd, 0, &c, 1, NULL, 0, s) &&
		     !nt_wait(fd, s, 0, 10000, &status, NULL) && !status;
	}
	close(fd);
	return ok;
}

/*
 * In a child: keep the card busy with copies until it goes away. Exits 0
 * when a call fails with -ENODEV (and nothing crashed), else non-zero.
 */
static int busy_until_gone(const char *pci)
{
	struct drm_neuron_copy c[2] = { { .size = 1 << 20 }, { .size = 1 << 20 } };
	struct drm_neuron_bo_create pc = {
		.size = 1 << 20, .placement = DRM_NEURON_BO_HOST,
		.flags = DRM_NEURON_BO_PINNED,
	};
	int f = open_at(pci), ret = 0;
	uint32_t a, b;

	if (f < 0 || nt_bo_create(f, 1 << 20, DRM_NEURON_BO_HOST, &a) ||
	    nt_bo_create(f, 1 << 20, DRM_NEURON_BO_DEVICE, &b) ||
	    nt_ioctl(f, DRM_IOCTL_NEURON_BO_CREATE, &pc))
		return 1;
	/* From a plain host buffer and from a pinned one (freed after removal). */
	c[0].src_handle = a;
	c[1].src_handle = pc.handle;
	c[0].dst_handle = b;
	c[1].dst_handle = b;
	/* Minutes at most: the removal takes seconds. */
	for (int i = 0; i < 10000000 && ret != -ENODEV; i++)
		ret = nt_submit_copies(f, i % 2, c, 2, NULL, 0, 0);
	return ret == -ENODEV ? 0 : 3;
}

TEST(unload_reload)
{
	int fd = nt_open();
	long long bos;
	char pci[64];

	if (fd < 0 || !getenv("NEURON_KO"))
		SKIP(return, "needs neuron.ko loaded and $NEURON_KO");
	ASSERT_EQ(0, nt_pci_address(fd, pci, sizeof(pci)));
	ASSERT_TRUE(card_works(pci));
	/* Jobs are freed after they signal, and with them their buffers. */
	for (int i = 0; i < 100 && (nt_counter(fd, "bos") || nt_counter(fd, "jobs")); i++)
		usleep(50 * 1000);
	bos = nt_counter(fd, "bos");
	EXPECT_EQ(0, nt_counter(fd, "jobs"));
	close(fd);
	EXPECT_EQ(0, bos);
	for (int i = 0; i < 3; i++) {
		ASSERT_EQ(0, system("rmmod neuron"));
		EXPECT_GT(0, nt_open());
		ASSERT_EQ(0, load());
		ASSERT_TRUE(card_works(pci));
	}
}

TEST(unplug_with_jobs_in_flight)
{
	char pci[64], path[160];
	int fd = nt_open(), st, wfd;
	pid_t pid;

	if (fd < 0)
		SKIP(return, "no neuron device (is neuron.ko loaded?)");
	ASSERT_EQ(0, nt_pci_address(fd, pci, sizeof(pci)));
	close(fd);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0)
		_exit(busy_until_gone(pci));
	usleep(500 * 1000);
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/remove", pci);
	wfd = open(path, O_WRONLY);
	ASSERT_GE(wfd, 0);
	ASSERT_EQ(1, write(wfd, "1", 1));
	close(wfd);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	EXPECT_GT(0, open_at(pci));
	/* Back on the bus: probed again, and usable. */
	wfd = open("/sys/bus/pci/rescan", O_WRONLY);
	ASSERT_GE(wfd, 0);
	ASSERT_EQ(1, write(wfd, "1", 1));
	close(wfd);
	EXPECT_TRUE(wait_card(pci, 1, 5000));
	EXPECT_TRUE(card_works(pci));
}

/*
 * Send a QMP command to the QEMU running this VM, through the relay of
 * scripts/vm ($NEURON_RUN_DIR/qmp); 0 if QEMU answered "return".
 */
static int qmp(const char *json)
{
	static int n;
	const char *dir = getenv("NEURON_RUN_DIR");
	char cmd[256], tmp[256], reply[256], buf[512] = "";
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s/qmp/%d.tmp-guest", dir, n);
	snprintf(cmd, sizeof(cmd), "%s/qmp/%d.cmd", dir, n);
	snprintf(reply, sizeof(reply), "%s/qmp/%d.reply", dir, n);
	n++;
	mkdir(dir, 0755);
	snprintf(buf, sizeof(buf), "%s/qmp", dir);
	mkdir(buf, 0755);
	f = fopen(tmp, "w");
	if (!f)
		return -1;
	fputs(json, f);
	fclose(f);
	rename(tmp, cmd);
	for (int i = 0; i < 200; i++) {
		f = fopen(reply, "r");
		if (f) {
			size_t len = fread(buf, 1, sizeof(buf) - 1, f);

			buf[len] = '\0';
			fclose(f);
			return strstr(buf, "\"return\"") ? 0 : -1;
		}
		usleep(50 * 1000);
	}
	return -1;
}

/*
 * Hot-unplug the way an operator does it: device_del over QMP while a
 * process has jobs in flight (the guest's PCIe hot-plug driver removes the
 * card), then device_add it back and use it.
 */
TEST(qmp_device_del_and_add)
{
	char pci[64];
	int st;
	pid_t pid;

	first_card(pci, sizeof(pci));
	if (!pci[0] || !getenv("NEURON_RUN_DIR"))
		SKIP(return, "needs the card and scripts/vm's QMP relay ($NEURON_RUN_DIR)");
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0)
		_exit(busy_until_gone(pci));
	usleep(300 * 1000);
	/* scripts/vm names the cards trn<i>, behind root ports rp<i>. */
	ASSERT_EQ(0, qmp("{\"execute\": \"device_del\", \"arguments\": {\"id\": \"trn0\"}}"));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	EXPECT_TRUE(wait_card(pci, 0, 30000));
	/* QEMU finishes the removal once the guest has let go of the card. */
	for (int i = 0; i < 100 && qmp("{\"execute\": \"device_add\", \"arguments\": "
				       "{\"driver\": \"trainium\", \"id\": \"trn0\", "
				       "\"bus\": \"rp0\"}}"); i++)
		usleep(100 * 1000);
	EXPECT_TRUE(wait_card(pci, 1, 30000));
	EXPECT_TRUE(card_works(pci));
}

TEST_HARNESS_MAIN
