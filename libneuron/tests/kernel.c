// SPDX-License-Identifier: MIT
/*
 * Description: a kernel built instruction by instruction, saved to a file,
 * loaded back and run with buffers bound to its slots; the loader's
 * refusals (bad magic, checksum, version, truncation).
 */
#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#include "t_helpers.h"

static struct nisa_tensor tens(unsigned int slot, uint32_t n)
{
	return (struct nisa_tensor){ .slot = slot, .dtype = NISA_F32, .ndim = 1,
				    .shape = { n }, .strides = { 1 } };
}

int main(void)
{
	struct nrn_device *dev = t_open_device();
	struct nrn_kernel *k, *back;
	struct nrn_stream *s;
	struct nrn_buffer *bufs[2];
	uint32_t access[2] = { NISA_ACCESS_READ, NISA_ACCESS_READ | NISA_ACCESS_WRITE };
	char path[] = "/tmp/neuron-kernel-XXXXXX";
	float x[64], y[64];
	double three = 3.0;
	struct nisa_insn in = { .opcode = NISA_INSN_BINARY, .subop = NISA_BIN_MUL,
			       .flags = NISA_IF_SCALAR, .dst = tens(1, 64),
			       .src = { tens(0, 64) } };
	void *blob;
	size_t len;
	int fd;

	memcpy(&in.scalar, &three, sizeof(three));
	t_check_ret(nrn_kernel_create(2, &k), 0);
	t_check_ret(nrn_kernel_append(k, &in), 0);
	in.opcode = NISA_INSN_UNARY;
	in.subop = NISA_UN_NEG;
	in.flags = 0;
	in.src[0] = tens(1, 64);
	t_check_ret(nrn_kernel_append(k, &in), 0);
	/* A slot the kernel does not have. */
	in.dst.slot = 2;
	t_check_ret(nrn_kernel_append(k, &in), -EINVAL);

	fd = mkstemp(path);
	t_check(fd >= 0);
	close(fd);
	t_check_ret(nrn_kernel_save(k, path), 0);
	t_check_ret(nrn_kernel_load(path, &back), 0);
	t_check(nrn_kernel_count(back) == 2 && nrn_kernel_slots(back) == 2);

	for (int i = 0; i < 64; i++)
		x[i] = (float)i - 10;
	t_check_ret(nrn_stream_create(dev, &s), 0);
	t_check_ret(nrn_buffer_alloc(dev, sizeof(x), NRN_MEM_DEVICE, &bufs[0]), 0);
	t_check_ret(nrn_buffer_alloc(dev, sizeof(y), NRN_MEM_DEVICE, &bufs[1]), 0);
	t_check_ret(nrn_stream_copy_h2d(s, bufs[0], 0, x, sizeof(x)), 0);
	t_check_ret(nrn_kernel_launch(s, back, bufs, access), 0);
	t_check_ret(nrn_stream_copy_d2h(s, y, bufs[1], 0, sizeof(y)), 0);
	for (int i = 0; i < 64; i++)
		t_check(y[i] == -3 * x[i]);
	/* Host buffers cannot be bound; rights must be given. */
	{
		struct nrn_buffer *host, *hb[2];
		uint32_t none[2] = { 0, 0 };

		t_check_ret(nrn_buffer_alloc(dev, 4096, NRN_MEM_HOST, &host), 0);
		hb[0] = host;
		hb[1] = bufs[1];
		t_check_ret(nrn_kernel_launch(s, back, hb, access), -EINVAL);
		t_check_ret(nrn_kernel_launch(s, back, bufs, none), -EINVAL);
		nrn_buffer_free(host);
	}

	/* The loader checks what it reads. */
	t_check_ret(nrn_kernel_serialize(k, &blob, &len), 0);
	((char *)blob)[len - 1] ^= 1;
	t_check_ret(nrn_kernel_deserialize(blob, len, &back), -EBADMSG);
	((char *)blob)[len - 1] ^= 1;
	t_check_ret(nrn_kernel_deserialize(blob, len - 1, &back), -EINVAL);
	((char *)blob)[0] = 'X';
	t_check_ret(nrn_kernel_deserialize(blob, len, &back), -EINVAL);
	((char *)blob)[0] = 'N';
	((uint32_t *)blob)[3] = 99; /* ISA version */
	t_check_ret(nrn_kernel_deserialize(blob, len, &back), -ENOTSUP);
	t_check_ret(nrn_kernel_load("/nonexistent/kernel", &back), -ENOENT);
	free(blob);

	unlink(path);
	nrn_kernel_destroy(k);
	nrn_buffer_free(bufs[0]);
	nrn_buffer_free(bufs[1]);
	nrn_stream_destroy(s);
	nrn_device_close(dev);
	return t_exit();
}
