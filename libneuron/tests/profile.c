// SPDX-License-Identifier: MIT
/*
 * Description: what the profiler builds on -- nrn_op_timestamp() writes the
 * card's clock inside the stream's batch (ordered with the work around it,
 * no submission of its own), its argument checks and a capturing stream's
 * refusal (and, with NRN_CAPTURE_TIMESTAMPS, a compiled graph's clock read
 * anew at each launch); nrn_stream_queues() places consecutive streams on different
 * NeuronCores and DMA queues, within the card's counts.
 */
#include <errno.h>

#include "t_helpers.h"

static struct nrn_device *dev;

static void test_timestamp(void)
{
	struct nrn_stream *s;
	struct nrn_buffer *clk, *data, *host, *other = NULL;
	struct nrn_tensor_desc t;
	int64_t shape[1] = { 1 << 18 };
	int64_t v[3];
	struct nrn_capture *cap = NULL;

	t_check_ret(nrn_stream_create(dev, &s), 0);
	t_check_ret(nrn_buffer_alloc(dev, 64, NRN_MEM_DEVICE, &clk), 0);
	t_check_ret(nrn_buffer_alloc(dev, 4 << 18, NRN_MEM_DEVICE, &data), 0);
	t_check_ret(nrn_buffer_alloc(dev, 64, NRN_MEM_HOST, &host), 0);
	nrn_tensor_contiguous(&t, data, 0, NISA_F32, 1, shape);

	/* clock, work, clock, (nothing), clock: in order, one batch */
	t_check_ret(nrn_op_timestamp(s, clk, 0), 0);
	t_check_ret(nrn_op_fill(s, &t, 1), 0);
	for (int i = 0; i < 8; i++)
		t_check_ret(nrn_op_binary_scalar(s, NISA_BIN_MUL, &t, &t, 1.5, 1, 0), 0);
	t_check_ret(nrn_op_timestamp(s, clk, 8), 0);
	t_check_ret(nrn_op_timestamp(s, clk, 16), 0);
	t_check_ret(nrn_stream_copy_d2h(s, v, clk, 0, sizeof(v)), 0);
	t_check(v[0] > 0);
	t_check(v[1] > v[0]);		/* the work took time */
	t_check(v[2] >= v[1]);
	t_check(v[2] - v[1] < v[1] - v[0]); /* adjacent stamps: no work between */

	/* bad arguments: alignment, range, host memory, another card */
	t_check_ret(nrn_op_timestamp(s, clk, 4), -EINVAL);
	t_check_ret(nrn_op_timestamp(s, clk, 64), -EINVAL);
	t_check_ret(nrn_op_timestamp(s, clk, 57), -EINVAL);
	t_check_ret(nrn_op_timestamp(s, host, 0), -EINVAL);
	t_check_ret(nrn_op_timestamp(NULL, clk, 0), -EINVAL);
	t_check_ret(nrn_op_timestamp(s, NULL, 0), -EINVAL);
	if (nrn_device_count() > 1) {
		struct nrn_device *d1;

		t_check_ret(nrn_device_open(1, &d1), 0);
		t_check_ret(nrn_buffer_alloc(d1, 64, NRN_MEM_DEVICE, &other), 0);
		t_check_ret(nrn_op_timestamp(s, other, 0), -EXDEV);
		nrn_buffer_free(other);
		nrn_device_close(d1);
	}

	/* the clock is no result: a capture refuses it */
	t_check_ret(nrn_stream_begin_capture(s), 0);
	t_check(nrn_op_timestamp(s, clk, 0) < 0);
	t_check(nrn_stream_end_capture(s, &cap) < 0);
	t_check(cap == NULL);
	t_check_ret(nrn_stream_sync(s), 0);

	/*
	 * ... unless asked to keep it (a kernel reading the clock at points of
	 * its own): each launch of the compiled graph writes the clock anew,
	 * in order with the work between, fused or not.
	 */
	t_check_ret(nrn_stream_begin_capture_flags(s, 0x80), -EINVAL);
	t_check_ret(nrn_stream_begin_capture_flags(s, NRN_CAPTURE_TIMESTAMPS), 0);
	t_check_ret(nrn_op_timestamp(s, clk, 0), 0);
	t_check_ret(nrn_op_fill(s, &t, 1), 0);
	for (int i = 0; i < 8; i++)
		t_check_ret(nrn_op_binary_scalar(s, NISA_BIN_MUL, &t, &t, 1.5, 1, 0), 0);
	t_check_ret(nrn_op_timestamp(s, clk, 8), 0);
	t_check_ret(nrn_stream_end_capture(s, &cap), 0);
	{
		struct nrn_graph_arg args[2] = {
			{ .buf = clk, .offset = 0, .size = 16 },
			{ .buf = data, .offset = 0, .size = 4 << 18 },
		};
		struct nrn_graph *g;
		int64_t w[2];

		t_check_ret(nrn_graph_compile(cap, args, 2, NRN_GRAPH_FUSE, &g), 0);
		t_check_ret(nrn_graph_launch(s, g, args, NULL, 0), 0);
		t_check_ret(nrn_stream_copy_d2h(s, v, clk, 0, 16), 0);
		t_check_ret(nrn_graph_launch(s, g, args, NULL, 0), 0);
		t_check_ret(nrn_stream_copy_d2h(s, w, clk, 0, 16), 0);
		t_check(v[1] > v[0] && w[1] > w[0]);	/* the work between them took time */
		t_check(w[0] >= v[1]);			/* a later launch, a later clock */
		nrn_graph_destroy(g);
		nrn_capture_destroy(cap);
	}

	nrn_buffer_free(clk);
	nrn_buffer_free(data);
	nrn_buffer_free(host);
	nrn_stream_destroy(s);
}

static void test_queues(void)
{
	struct nrn_device_info info;
	struct nrn_stream *s[2];
	unsigned int core[2], dma[2];

	t_check_ret(nrn_device_info(dev, &info), 0);
	for (int i = 0; i < 2; i++) {
		t_check_ret(nrn_stream_create(dev, &s[i]), 0);
		t_check_ret(nrn_stream_queues(s[i], &core[i], &dma[i]), 0);
		t_check(core[i] < info.num_cores && dma[i] < info.num_dma_queues);
	}
	if (info.num_cores > 1)
		t_check(core[0] != core[1]);
	if (info.num_dma_queues > 1)
		t_check(dma[0] != dma[1]);
	t_check_ret(nrn_stream_queues(NULL, &core[0], &dma[0]), -EINVAL);
	t_check_ret(nrn_stream_queues(s[0], NULL, &dma[0]), -EINVAL);
	for (int i = 0; i < 2; i++)
		nrn_stream_destroy(s[i]);
}

int main(void)
{
	dev = t_open_device();
	test_timestamp();
	test_queues();
	nrn_device_close(dev);
	if (t_failures) {
		fprintf(stderr, "profile: %d checks failed\n", t_failures);
		return T_EXIT_FAIL;
	}
	printf("profile: ok\n");
	return T_EXIT_PASS;
}
