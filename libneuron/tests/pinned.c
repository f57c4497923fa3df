// SPDX-License-Identifier: MIT
/*
 * Description: host buffers allocated pinned (NRN_MEM_HOST_PINNED): what
 * they report, copies through them at offsets (with device buffers, plain
 * host buffers and user memory), from two threads at once, a buffer freed
 * with a copy still in flight, NRN_MEM_HOST_PREFER_PINNED past the budget,
 * and the errors of bad arguments.
 */
#include <errno.h>
#include <pthread.h>

#include "t_helpers.h"

#define MiB (1u << 20)
#define MAX_PINNED "/sys/module/neuron/parameters/max_pinned_mb"

/* neuron.ko's budget of pinned memory in MiB, set to @mb (if not NULL);
 * -1 when it cannot be read or set (not root). */
static long max_pinned_mb(const char *mb)
{
	FILE *f = fopen(MAX_PINNED, mb ? "r+" : "r");
	long old = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &old) != 1)
		old = -1;
	if (mb && old >= 0 && (fseek(f, 0, SEEK_SET) || fputs(mb, f) < 0))
		old = -1;
	if (fclose(f))
		old = -1;
	return old;
}

/*
 * NRN_MEM_HOST_PREFER_PINNED past the budget of pinned memory: a plain host
 * buffer, whose copies (each within the budget) work as any other's, where
 * NRN_MEM_HOST_PINNED fails.
 */
static void prefer_pinned_past_the_budget(void)
{
	struct nrn_device *dev = NULL;	/* its own: a budget nothing else uses */
	struct nrn_stream *s = NULL;
	struct nrn_buffer *a = NULL, *d = NULL;
	unsigned char *in = malloc(8 * MiB), *out = malloc(8 * MiB);
	char old[32];
	long was = max_pinned_mb(NULL);
	void *map;

	if (was < 0 || !in || !out) {
		printf("# prefer_pinned_past_the_budget not run: needs root, to set %s\n", MAX_PINNED);
		goto done;
	}
	snprintf(old, sizeof(old), "%ld", was);
	t_check(max_pinned_mb("4") == was);
	dev = t_open_device();
	t_check_ret(nrn_stream_create(dev, &s), 0);
	t_check_ret(nrn_buffer_alloc(dev, 8 * MiB, NRN_MEM_HOST_PINNED, &a), -E2BIG);
	t_check_ret(nrn_buffer_alloc(dev, 8 * MiB, NRN_MEM_HOST_PREFER_PINNED, &a), 0);
	t_check_ret(nrn_buffer_alloc(dev, 8 * MiB, NRN_MEM_DEVICE, &d), 0);
	if (a && d) {
		t_check(nrn_buffer_mem(a) == NRN_MEM_HOST);
		t_fill(in, 8 * MiB, 21);
		t_check_ret(nrn_buffer_map(a, &map), 0);
		memcpy(map, in, 8 * MiB);
		/* Each copy pins its pages: 1 MiB at a time fits the budget. */
		for (size_t off = 0; off < 8 * MiB; off += MiB) {
			t_check_ret(nrn_stream_copy_buffer(s, d, off, a, off, MiB), 0);
			t_check_ret(nrn_stream_sync(s), 0);
		}
		t_check_ret(nrn_copy_d2h(out, d, 0, 8 * MiB), 0);
		t_check(!memcmp(in, out, 8 * MiB));
	}
	nrn_buffer_free(a);
	nrn_buffer_free(d);
	nrn_stream_destroy(s);
	nrn_device_close(dev);
	t_check(max_pinned_mb(old) == 4);
done:
	free(in);
	free(out);
}

/* pinned -> device -> pinned -> plain host -> user memory, at offsets. */
static void roundtrip(struct nrn_device *dev, struct nrn_stream *s, size_t size,
		      size_t off, size_t len, unsigned int seed)
{
	struct nrn_buffer *a = NULL, *b = NULL, *d = NULL, *plain = NULL;
	unsigned char *pa, *pb, *out = malloc(len);
	void *map;

	t_check_ret(nrn_buffer_alloc(dev, size, NRN_MEM_HOST_PINNED, &a), 0);
	t_check_ret(nrn_buffer_alloc(dev, size, NRN_MEM_HOST_PINNED, &b), 0);
	t_check_ret(nrn_buffer_alloc(dev, size, NRN_MEM_DEVICE, &d), 0);
	t_check_ret(nrn_buffer_alloc(dev, size, NRN_MEM_HOST, &plain), 0);
	if (!a || !b || !d || !plain || !out)
		goto out;
	t_check(nrn_buffer_mem(a) == NRN_MEM_HOST);
	t_check(nrn_buffer_size(a) == size);
	t_check_ret(nrn_buffer_map(a, &map), 0);
	pa = map;
	t_check_ret(nrn_buffer_map(b, &map), 0);
	pb = map;
	t_fill(pa, size, seed);
	memset(pb, 0x5a, size);

	t_check_ret(nrn_stream_copy_buffer(s, d, size - off - len, a, off, len), 0);
	t_check_ret(nrn_stream_copy_buffer(s, b, off / 2, d, size - off - len, len), 0);
	t_check_ret(nrn_stream_copy_buffer(s, plain, off, b, off / 2, len), 0);
	t_check_ret(nrn_stream_sync(s), 0);
	t_check(!memcmp(pa + off, pb + off / 2, len));
	if (off / 2)
		t_check(pb[off / 2 - 1] == 0x5a);
	if (off / 2 + len < size)
		t_check(pb[off / 2 + len] == 0x5a);
	t_check_ret(nrn_copy_d2h(out, plain, off, len), 0);
	t_check(!memcmp(pa + off, out, len));
	/* User memory into a pinned buffer and out again. */
	t_fill(out, len, seed + 1);
	t_check_ret(nrn_copy_h2d(a, off, out, len), 0);
	t_check(!memcmp(pa + off, out, len));
	t_check_ret(nrn_copy_buffer(d, 0, a, off, len), 0);
	memset(out, 0, len);
	t_check_ret(nrn_copy_d2h(out, d, 0, len), 0);
	t_check(!memcmp(pa + off, out, len));
out:
	nrn_buffer_free(a);
	nrn_buffer_free(b);
	nrn_buffer_free(d);
	nrn_buffer_free(plain);
	free(out);
}

struct worker {
	struct nrn_device *dev;
	unsigned int seed;
};

static void *worker(void *arg)
{
	struct worker *w = arg;
	struct nrn_stream *s;

	t_check_ret(nrn_stream_create(w->dev, &s), 0);
	for (int i = 0; i < 4; i++)
		roundtrip(w->dev, s, 2 * MiB + 4096 * i, 4096 * i + 7, MiB + 1,
			  w->seed + i);
	nrn_stream_destroy(s);
	return NULL;
}

int main(void)
{
	struct nrn_device *dev = t_open_device();
	struct worker w[2] = { { dev, 1 }, { dev, 100 } };
	struct nrn_buffer *a = NULL, *d = NULL;
	unsigned char tail[16];
	pthread_t th[2];
	struct nrn_stream *s;
	void *map;

	t_check_ret(nrn_stream_create(dev, &s), 0);
	roundtrip(dev, s, 4096, 0, 4096, 3);
	roundtrip(dev, s, 9 * MiB + 13, 3, 9 * MiB, 5);
	roundtrip(dev, s, 16 * MiB, 4095, 8 * MiB + 2, 9);

	/* Thread-safe: two threads, a stream each. */
	for (int i = 0; i < 2; i++)
		t_check(!pthread_create(&th[i], NULL, worker, &w[i]));
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);

	/* Freed with its copy in flight: the copy still completes. */
	t_check_ret(nrn_buffer_alloc(dev, 32 * MiB, NRN_MEM_HOST_PINNED, &a), 0);
	t_check_ret(nrn_buffer_alloc(dev, 32 * MiB, NRN_MEM_DEVICE, &d), 0);
	if (a && d) {
		t_check_ret(nrn_buffer_map(a, &map), 0);
		memset(map, 0x33, 32 * MiB);
		t_check_ret(nrn_stream_copy_buffer(s, d, 0, a, 0, 32 * MiB), 0);
		nrn_buffer_free(a);
		t_check_ret(nrn_stream_sync(s), 0);
		t_check_ret(nrn_copy_d2h(tail, d, 32 * MiB - sizeof(tail), sizeof(tail)), 0);
		for (size_t i = 0; i < sizeof(tail); i++)
			t_check(tail[i] == 0x33);
	}
	nrn_buffer_free(d);

	prefer_pinned_past_the_budget();

	/* Bad arguments. */
	t_check_ret(nrn_buffer_alloc(dev, 0, NRN_MEM_HOST_PINNED, &a), -EINVAL);
	t_check_ret(nrn_buffer_alloc(dev, 4096, (enum nrn_mem)4, &a), -EINVAL);
	t_check_ret(nrn_buffer_alloc(dev, (size_t)1 << 50, NRN_MEM_HOST_PINNED, &a), -E2BIG);
	nrn_stream_destroy(s);
	nrn_device_close(dev);
	return t_exit();
}
