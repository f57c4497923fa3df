// SPDX-License-Identifier: MIT
/*
 * Description: copies between user memory, device buffers and host
 * buffers, across sizes and offsets, and the errors of bad ranges.
 */
#include <errno.h>

#include "t_helpers.h"

static void roundtrip(struct nrn_device *dev, enum nrn_mem where, size_t size,
		      size_t off, size_t len)
{
	struct nrn_buffer *a, *b;
	unsigned char *src = malloc(len), *dst = malloc(len);

	t_fill(src, len, (unsigned int)(size + off));
	memset(dst, 0, len);
	t_check_ret(nrn_buffer_alloc(dev, size, where, &a), 0);
	t_check_ret(nrn_buffer_alloc(dev, size, NRN_MEM_DEVICE, &b), 0);
	t_check_ret(nrn_copy_h2d(a, off, src, len), 0);
	/* a -> b on the DMA engine, then back out of b. */
	t_check_ret(nrn_copy_buffer(b, off, a, off, len), 0);
	t_check_ret(nrn_copy_d2h(dst, b, off, len), 0);
	if (memcmp(src, dst, len)) {
		fprintf(stderr, "data mismatch: mem %d size %zu off %zu len %zu\n",
			where, size, off, len);
		t_failures++;
	}
	nrn_buffer_free(a);
	nrn_buffer_free(b);
	free(src);
	free(dst);
}

int main(void)
{
	struct nrn_device *dev = t_open_device();
	static const size_t sizes[] = { 1, 4096, 4097, 65536 + 13, 9 << 20 };
	struct nrn_buffer *buf;
	char byte = 0;

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		roundtrip(dev, NRN_MEM_DEVICE, sizes[i], 0, sizes[i]);
		roundtrip(dev, NRN_MEM_HOST, sizes[i], 0, sizes[i]);
		if (sizes[i] > 3)
			roundtrip(dev, NRN_MEM_DEVICE, sizes[i], 3, sizes[i] - 3);
	}

	/* Bad ranges fail with -EINVAL and touch nothing. */
	t_check_ret(nrn_buffer_alloc(dev, 4096, NRN_MEM_DEVICE, &buf), 0);
	t_check_ret(nrn_copy_h2d(buf, 4096, &byte, 1), -EINVAL);
	t_check_ret(nrn_copy_h2d(buf, 1, &byte, 4096), -EINVAL);
	t_check_ret(nrn_copy_d2h(&byte, buf, (size_t)-1, 2), -EINVAL);
	t_check_ret(nrn_copy_buffer(buf, 0, buf, 4000, 100), -EINVAL);
	t_check_ret(nrn_copy_h2d(buf, 0, NULL, 1), -EFAULT);
	t_check_ret(nrn_buffer_alloc(dev, 0, NRN_MEM_DEVICE, &buf), -EINVAL);
	nrn_buffer_free(buf);
	nrn_device_close(dev);
	return t_exit();
}
