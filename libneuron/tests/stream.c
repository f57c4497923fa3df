// SPDX-License-Identifier: MIT
/*
 * Description: streams and events -- ordering across streams with events,
 * a job error surfacing on the stream that issued it (with the device's
 * error code) and not on another, the stream usable afterwards, and many
 * threads sharing one device.
 */
#include <errno.h>
#include <pthread.h>

#include "t_helpers.h"

static struct nrn_device *dev;

static void test_events(void)
{
	struct nrn_stream *a, *b;
	struct nrn_event *ev;
	struct nrn_buffer *buf;
	struct nrn_tensor_desc t;
	int64_t shape[1] = { 1 << 16 };
	float out[4];

	t_check_ret(nrn_stream_create(dev, &a), 0);
	t_check_ret(nrn_stream_create(dev, &b), 0);
	t_check_ret(nrn_event_create(dev, &ev), 0);
	t_check_ret(nrn_event_wait(ev, 0), -EINVAL); /* never recorded */
	t_check_ret(nrn_buffer_alloc(dev, 4 << 16, NRN_MEM_DEVICE, &buf), 0);
	nrn_tensor_contiguous(&t, buf, 0, NISA_F32, 1, shape);
	/* a fills with 1 then adds 1; b waits for a's event, then doubles. */
	t_check_ret(nrn_op_fill(a, &t, 1), 0);
	t_check_ret(nrn_op_binary_scalar(a, NISA_BIN_ADD, &t, &t, 1, 1, 0), 0);
	t_check_ret(nrn_event_record(ev, a), 0);
	t_check_ret(nrn_stream_wait_event(b, ev), 0);
	t_check_ret(nrn_op_binary_scalar(b, NISA_BIN_MUL, &t, &t, 2, 1, 0), 0);
	t_check_ret(nrn_stream_copy_d2h(b, out, buf, 0, sizeof(out)), 0);
	t_check(out[0] == 4 && out[3] == 4);
	t_check_ret(nrn_event_wait(ev, -1), 0);
	t_check_ret(nrn_event_query(ev), 0);
	nrn_event_destroy(ev);
	nrn_buffer_free(buf);
	nrn_stream_destroy(a);
	nrn_stream_destroy(b);
}

static void test_errors(void)
{
	struct nrn_stream *a, *b;
	struct nrn_buffer *buf, *idx;
	struct nrn_tensor_desc t, ti, to;
	int64_t shape[2] = { 4, 4 }, ishape[1] = { 2 };
	int64_t bad_index[2] = { 1, 7 };
	float out[16];

	t_check_ret(nrn_stream_create(dev, &a), 0);
	t_check_ret(nrn_stream_create(dev, &b), 0);
	t_check_ret(nrn_buffer_alloc(dev, 4096, NRN_MEM_DEVICE, &buf), 0);
	t_check_ret(nrn_buffer_alloc(dev, 4096, NRN_MEM_DEVICE, &idx), 0);
	nrn_tensor_contiguous(&t, buf, 0, NISA_F32, 2, shape);
	nrn_tensor_contiguous(&ti, idx, 0, NISA_I64, 1, ishape);
	nrn_tensor_contiguous(&to, buf, 256, NISA_F32, 2, (int64_t[]){ 2, 4 });
	t_check_ret(nrn_stream_copy_h2d(a, idx, 0, bad_index, sizeof(bad_index)), 0);
	/* An index out of range: the device fails the job. */
	t_check_ret(nrn_op_gather(a, NISA_IDX_SELECT, &to, &t, &ti, 0), 0);
	t_check_ret(nrn_op_fill(a, &t, 5), 0); /* after it, in the same chain */
	t_check_ret(nrn_op_fill(b, &t, 3), 0);
	t_check_ret(nrn_stream_sync(b), 0);    /* b is not affected */
	t_check_ret(nrn_stream_sync(a), -EIO);
	t_check(nrn_stream_device_error(a) == NISA_ERR_BAD_INDEX);
	t_check(strcmp(nrn_device_error_name(NISA_ERR_BAD_INDEX), "index out of range") == 0);
	/* Reported once; the stream works again. */
	t_check_ret(nrn_stream_sync(a), 0);
	t_check_ret(nrn_op_fill(a, &t, 9), 0);
	t_check_ret(nrn_stream_copy_d2h(a, out, buf, 0, sizeof(out)), 0);
	t_check(out[0] == 9 && out[15] == 9);
	nrn_buffer_free(buf);
	nrn_buffer_free(idx);
	nrn_stream_destroy(a);
	nrn_stream_destroy(b);
}

struct worker {
	int id;
	int failures;
};

static void *worker(void *arg)
{
	struct worker *w = arg;
	int64_t shape[1] = { 1000 };
	struct nrn_stream *s;
	struct nrn_buffer *buf;
	struct nrn_tensor_desc t;
	float out[1000];

	if (nrn_stream_create(dev, &s) || nrn_buffer_alloc(dev, 4000, NRN_MEM_DEVICE, &buf)) {
		w->failures++;
		return NULL;
	}
	nrn_tensor_contiguous(&t, buf, 0, NISA_F32, 1, shape);
	for (int it = 0; it < 30; it++) {
		if (nrn_op_fill(s, &t, w->id) ||
		    nrn_op_binary_scalar(s, NISA_BIN_MUL, &t, &t, it, 1, 0) ||
		    nrn_stream_copy_d2h(s, out, buf, 0, sizeof(out))) {
			w->failures++;
			continue;
		}
		for (int i = 0; i < 1000; i++)
			if (out[i] != (float)(w->id * it)) {
				w->failures++;
				break;
			}
	}
	nrn_buffer_free(buf);
	nrn_stream_destroy(s);
	return NULL;
}

static void test_threads(void)
{
	enum { T = 8 };
	pthread_t th[T];
	struct worker w[T];

	for (int i = 0; i < T; i++) {
		w[i] = (struct worker){ .id = i + 1 };
		pthread_create(&th[i], NULL, worker, &w[i]);
	}
	for (int i = 0; i < T; i++) {
		pthread_join(th[i], NULL);
		t_check(w[i].failures == 0);
	}
}

int main(void)
{
	dev = t_open_device();
	test_events();
	test_errors();
	test_threads();
	t_check_ret(nrn_stream_create(NULL, NULL), -EINVAL);
	nrn_device_close(dev);
	return t_exit();
}
