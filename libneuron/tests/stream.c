// SPDX-License-Identifier: MIT
/*
 * Description: streams and events -- ordering across streams with events,
 * a job error surfacing on the stream that issued it (with the device's
 * error code) and not on another, the stream usable afterwards, timing
 * events (the card's clock), and many threads sharing one device.
 */
#include <errno.h>
#include <pthread.h>
#include <time.h>

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
	t_check(strcmp(nrn_device_error_name(NISA_ERR_PEER), "link down") == 0);
	t_check(strcmp(nrn_device_error_name(NISA_ERR_DIV_ZERO), "integer division by zero") == 0);
	t_check(strcmp(nrn_device_error_name(NISA_NUM_ERRS), "unknown device error") == 0);
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

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/*
 * Timing events: the card's time between two points, larger for big work
 * than for a tiny op, comparable across streams (cores) of one card;
 * -EBUSY before completion, -EINVAL without timing or a record.
 */
static void test_timing(void)
{
	enum { M = 1024, REPS = 6 };
	int64_t shape[2] = { M, M }, one[1] = { 1 }, big, tiny, cross, back, again;
	int64_t wall;
	struct nrn_event *t0, *t1, *t2, *plain;
	struct nrn_stream *a, *b;
	struct nrn_buffer *buf;
	struct nrn_tensor_desc x, y, z;

	t_check_ret(nrn_stream_create(dev, &a), 0);
	t_check_ret(nrn_stream_create(dev, &b), 0);
	t_check_ret(nrn_event_create_flags(dev, NRN_EVENT_TIMING, &t0), 0);
	t_check_ret(nrn_event_create_flags(dev, NRN_EVENT_TIMING, &t1), 0);
	t_check_ret(nrn_event_create_flags(dev, NRN_EVENT_TIMING, &t2), 0);
	t_check_ret(nrn_event_create_flags(dev, 0x80, &plain), -EINVAL);
	t_check_ret(nrn_event_create(dev, &plain), 0);
	t_check_ret(nrn_buffer_alloc(dev, 3 * 4 * M * M, NRN_MEM_DEVICE, &buf), 0);
	nrn_tensor_contiguous(&x, buf, 0, NISA_F32, 2, shape);
	nrn_tensor_contiguous(&y, buf, 4 * M * M, NISA_F32, 2, shape);
	nrn_tensor_contiguous(&z, buf, 8 * M * M, NISA_F32, 2, shape);
	t_check_ret(nrn_op_fill(a, &x, 0.5), 0);
	t_check_ret(nrn_op_fill(a, &y, 0.25), 0);
	t_check_ret(nrn_event_elapsed_ns(t0, t1, &big), -EINVAL); /* not recorded */

	wall = now_ns();
	t_check_ret(nrn_event_record(t0, a), 0);
	for (int i = 0; i < REPS; i++)
		t_check_ret(nrn_op_matmul(a, &z, &x, &y, NULL, 0), 0);
	t_check_ret(nrn_event_record(t1, a), 0);
	/* Seconds of matmuls queued: not complete yet. */
	t_check_ret(nrn_event_elapsed_ns(t0, t1, &big), -EBUSY);
	nrn_tensor_contiguous(&z, buf, 0, NISA_F32, 1, one);
	t_check_ret(nrn_op_fill(a, &z, 1), 0);
	t_check_ret(nrn_event_record(t2, a), 0);
	t_check_ret(nrn_event_wait(t2, -1), 0);
	wall = now_ns() - wall;
	t_check_ret(nrn_event_elapsed_ns(t0, t1, &big), 0);
	t_check_ret(nrn_event_elapsed_ns(t1, t2, &tiny), 0);
	fprintf(stderr, "timing: %d matmuls %lld ns, a fill %lld ns, wall %lld ns\n",
		REPS, (long long)big, (long long)tiny, (long long)wall);
	t_check(big > 0 && tiny >= 0 && big > tiny);
	/* The card's time of the work is within the time the host waited. */
	t_check(big + tiny <= wall + wall / 2);

	/* Another stream (another core) after t2: its time is later. */
	t_check_ret(nrn_stream_wait_event(b, t2), 0);
	t_check_ret(nrn_op_fill(b, &z, 2), 0);
	t_check_ret(nrn_event_record(t1, b), 0); /* re-record t1 on b */
	t_check_ret(nrn_event_wait(t1, -1), 0);
	t_check_ret(nrn_event_elapsed_ns(t2, t1, &cross), 0);
	t_check_ret(nrn_event_elapsed_ns(t1, t2, &back), 0);
	t_check(cross >= 0 && back == -cross);
	t_check_ret(nrn_event_elapsed_ns(t0, t1, &again), 0);
	t_check(again >= big + tiny);

	/*
	 * Re-recorded on an idle stream while pending behind matmuls on a:
	 * the event's time, once complete, must not change afterwards (the
	 * old TIMESTAMP landing last would make it the matmuls' end).
	 */
	nrn_tensor_contiguous(&z, buf, 8 * M * M, NISA_F32, 2, shape);
	t_check_ret(nrn_event_record(t0, a), 0);
	for (int i = 0; i < REPS; i++)
		t_check_ret(nrn_op_matmul(a, &z, &x, &y, NULL, 0), 0);
	t_check_ret(nrn_event_record(t1, a), 0);
	t_check_ret(nrn_event_record(t1, b), 0);
	t_check_ret(nrn_event_wait(t1, -1), 0);
	t_check_ret(nrn_event_elapsed_ns(t0, t1, &cross), 0);
	t_check_ret(nrn_stream_sync(a), 0);
	t_check_ret(nrn_event_elapsed_ns(t0, t1, &again), 0);
	t_check(cross == again && cross > tiny);

	/* Not timing events. */
	t_check_ret(nrn_event_record(plain, a), 0);
	t_check_ret(nrn_event_wait(plain, -1), 0);
	t_check_ret(nrn_event_elapsed_ns(t0, plain, &big), -EINVAL);
	t_check_ret(nrn_event_elapsed_ns(plain, t0, &big), -EINVAL);
	t_check_ret(nrn_event_elapsed_ns(t0, t1, NULL), -EINVAL);
	nrn_event_destroy(plain);
	nrn_event_destroy(t0);
	nrn_event_destroy(t1);
	nrn_event_destroy(t2);
	nrn_buffer_free(buf);
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
	test_timing();
	test_errors();
	test_threads();
	t_check_ret(nrn_stream_create(NULL, NULL), -EINVAL);
	nrn_device_close(dev);
	return t_exit();
}
