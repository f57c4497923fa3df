// SPDX-License-Identifier: MIT
/*
 * Description: enumeration, open/close, info, buffer allocation, mapping
 * and the accounting of device memory.
 */
#include <errno.h>
#include <unistd.h>

#include "t_helpers.h"

int main(void)
{
	struct nrn_device *dev = t_open_device(), *dev2;
	struct nrn_device_info info, info2;
	struct nrn_buffer *buf, *huge;
	void *p, *p2;

	t_check_ret(nrn_device_info(dev, &info), 0);
	t_check(info.index == 0);
	t_check(info.device_id == 0x7e00);
	t_check(info.num_dma_queues >= 1);
	t_check(info.num_cores >= 1);
	t_check(info.mem_size >= (16u << 20));
	t_check(info.mem_free <= info.mem_size);
	t_check(strcmp(info.driver, "neuron") == 0);
	t_check(strlen(info.pci_address) == 12);
	t_check_ret(nrn_device_open(nrn_device_count(), &dev2), -ENODEV);

	/* Device memory is accounted as it is allocated and freed. */
	t_check_ret(nrn_buffer_alloc(dev, 1 << 20, NRN_MEM_DEVICE, &buf), 0);
	t_check_ret(nrn_device_info(dev, &info2), 0);
	t_check(info2.mem_free == info.mem_free - (1 << 20));
	t_check(nrn_buffer_size(buf) == 1 << 20);
	t_check(nrn_buffer_mem(buf) == NRN_MEM_DEVICE);
	/* Mapped once: the same address each time; writes land. */
	t_check_ret(nrn_buffer_map(buf, &p), 0);
	t_check_ret(nrn_buffer_map(buf, &p2), 0);
	t_check(p == p2);
	memset(p, 0x5a, 4096);
	nrn_buffer_free(buf);
	t_check_ret(nrn_device_info(dev, &info2), 0);
	t_check(info2.mem_free == info.mem_free);

	/* More than the card has: -ENOMEM, and nothing leaks. */
	t_check_ret(nrn_buffer_alloc(dev, info.mem_size + 4096, NRN_MEM_DEVICE,
				     &huge), -ENOMEM);
	t_check_ret(nrn_buffer_alloc(dev, 4096, 7, &huge), -EINVAL);
	t_check_ret(nrn_device_info(dev, &info2), 0);
	t_check(info2.mem_free == info.mem_free);
	t_check(strcmp(nrn_strerror(-ENODEV), nrn_strerror(ENODEV)) == 0);

	/* Shared through a dma-buf fd: another open of the card sees the data. */
	t_check_ret(nrn_device_open(0, &dev2), 0);
	for (int m = 0; m < 2; m++) {
		struct nrn_buffer *a, *b;
		char in[64] = "shared through PRIME", out[64] = { 0 };
		int fd;

		t_check_ret(nrn_buffer_alloc(dev, 4096, m ? NRN_MEM_HOST : NRN_MEM_DEVICE, &a), 0);
		t_check_ret(nrn_copy_h2d(a, 100, in, sizeof(in)), 0);
		t_check_ret(nrn_buffer_export(a, &fd), 0);
		t_check_ret(nrn_buffer_import(dev2, fd, &b), 0);
		close(fd);
		t_check(nrn_buffer_mem(b) == nrn_buffer_mem(a));
		t_check_ret(nrn_copy_d2h(out, b, 100, sizeof(out)), 0);
		t_check(strcmp(in, out) == 0);
		nrn_buffer_free(a);
		nrn_buffer_free(b);
	}
	t_check_ret(nrn_buffer_import(dev2, -1, &buf), -EINVAL);
	t_check_ret(nrn_buffer_import(dev2, 0x7fff, &buf), -EBADF);
	nrn_device_close(dev2);
	nrn_device_close(dev);
	return t_exit();
}
