// SPDX-License-Identifier: MIT
/*
 * Copies on a stream. Buffer to buffer is one DMA job. Ordinary (pageable)
 * user memory goes through the stream's host staging ring, in chunks, so
 * that the CPU's memcpy of one chunk overlaps the DMA of the previous one.
 *
 * On a capturing stream (graph.h) a buffer-to-buffer copy is recorded as
 * COPY instructions, bytes from user memory become the capture's constants
 * (and a COPY from them), and a copy to user memory is refused (-EBUSY).
 */
#include <errno.h>
#include <string.h>

#include "graph.h"

#define NRN_STAGING_SIZE (8u << 20)
#define NRN_STAGING_CHUNK (2u << 20)

static int nrn_check_range(const struct nrn_buffer *buf, size_t off, size_t len)
{
	if (!buf || off > buf->size || len > buf->size - off)
		return -EINVAL;
	return 0;
}

/* One DMA job of one copy, in stream order. */
static int nrn_dma_locked(struct nrn_stream *s, struct nrn_buffer *dst,
			  size_t dst_off, struct nrn_buffer *src,
			  size_t src_off, size_t len)
{
	struct drm_neuron_copy c = {
		.src_handle = src->handle, .dst_handle = dst->handle,
		.src_offset = src_off, .dst_offset = dst_off, .size = len,
	};
	struct drm_neuron_submit submit = {
		.engine = DRM_NEURON_ENGINE_DMA, .index = s->dma,
		.copies = (uintptr_t)&c, .copy_count = 1,
	};
	int ret = nrn_stream_flush_locked(s);

	return ret ? ret : nrn_stream_submit_locked(s, &submit);
}

NRN_EXPORT int nrn_stream_copy_buffer(struct nrn_stream *s,
				      struct nrn_buffer *dst, size_t dst_off,
				      struct nrn_buffer *src, size_t src_off,
				      size_t len)
{
	int ret;

	if (!s)
		return -EINVAL;
	ret = nrn_check_range(dst, dst_off, len);
	if (!ret)
		ret = nrn_check_range(src, src_off, len);
	if (ret)
		return ret;
	if (dst->dev != s->dev || src->dev != s->dev)
		return -EXDEV;
	if (!len)
		return 0;
	if (nrn_inherited(s->dev))
		return -EBADFD;
	pthread_mutex_lock(&s->lock);
	if (s->capture && (dst->mem != NRN_MEM_DEVICE || src->mem != NRN_MEM_DEVICE))
		ret = nrn_stream_refuse_locked(s, -ENOTSUP); /* operands: device memory */
	else if (s->capture)
		ret = nrn_capture_copy(s->capture, dst, dst_off, src, false, src_off, len);
	else
		ret = nrn_dma_locked(s, dst, dst_off, src, src_off, len);
	pthread_mutex_unlock(&s->lock);
	return ret;
}

/*
 * The stream's staging ring, allocated on first use: pinned, so that its
 * copies pin nothing (pageable copies of 64 MiB: about 0.8 -> 0.95 of a
 * memcpy in the VM), or, past the device file's budget of pinned memory
 * (or with a driver without pinned buffers), pinned by each copy as any
 * host buffer is.
 */
static int nrn_staging_ready(struct nrn_stream *s)
{
	if (s->staging.buf)
		return 0;
	return nrn_ring_init(s->dev, &s->staging, NRN_STAGING_SIZE, NRN_MEM_HOST_PREFER_PINNED);
}

/*
 * A host buffer is plain memory: once the stream's earlier work is done with
 * it, copy @len bytes between it (at @off) and @p, into the buffer if @in.
 */
static int nrn_host_copy_locked(struct nrn_stream *s, struct nrn_buffer *buf,
				size_t off, void *p, size_t len, bool in)
{
	void *map;
	int ret;

	ret = nrn_stream_sync_locked(s);
	if (!ret)
		ret = nrn_buffer_map(buf, &map);
	if (ret)
		return ret;
	if (in)
		memcpy((char *)map + off, p, len);
	else
		memcpy(p, (char *)map + off, len);
	return 0;
}

NRN_EXPORT int nrn_stream_copy_h2d(struct nrn_stream *s, struct nrn_buffer *dst,
				   size_t dst_off, const void *src, size_t len)
{
	const char *p = src;
	int ret;

	if (!s)
		return -EINVAL;
	ret = nrn_check_range(dst, dst_off, len);
	if (ret)
		return ret;
	if (!src && len)
		return -EFAULT;
	if (!len)
		return 0;
	if (nrn_inherited(s->dev))
		return -EBADFD;
	pthread_mutex_lock(&s->lock);
	if (s->capture) {
		uint64_t coff;

		/* A host buffer would change now, not when the graph runs. */
		if (dst->mem != NRN_MEM_DEVICE)
			ret = nrn_stream_refuse_locked(s, -EBUSY);
		else
			ret = nrn_capture_add_const(s->capture, src, len, &coff);
		if (!ret)
			ret = nrn_capture_copy(s->capture, dst, dst_off, NULL, true,
					       coff, len);
		pthread_mutex_unlock(&s->lock);
		return ret;
	}
	if (dst->mem == NRN_MEM_HOST) {
		ret = nrn_host_copy_locked(s, dst, dst_off, (void *)src, len, true);
		pthread_mutex_unlock(&s->lock);
		return ret;
	}
	ret = nrn_staging_ready(s);
	while (!ret && len) {
		size_t n = len < NRN_STAGING_CHUNK ? len : NRN_STAGING_CHUNK, off;

		ret = nrn_ring_alloc_locked(s, &s->staging, n, 64, &off);
		if (ret)
			break;
		memcpy(s->staging.map + off, p, n);
		ret = nrn_stream_flush_locked(s);
		if (ret)
			break;
		nrn_ring_commit_locked(s, &s->staging, off, n);
		ret = nrn_dma_locked(s, dst, dst_off, s->staging.buf, off, n);
		if (ret) {
			s->staging.count--;
			break;
		}
		p += n;
		dst_off += n;
		len -= n;
	}
	pthread_mutex_unlock(&s->lock);
	return ret;
}

NRN_EXPORT int nrn_stream_copy_d2h(struct nrn_stream *s, void *dst,
				   struct nrn_buffer *src, size_t src_off,
				   size_t len)
{
	size_t pend_off = 0, pend_len = 0, off;
	uint64_t pend_point = 0;
	char *p = dst;
	int ret;

	if (!s)
		return -EINVAL;
	ret = nrn_check_range(src, src_off, len);
	if (ret)
		return ret;
	if (!dst && len)
		return -EFAULT;
	if (nrn_inherited(s->dev))
		return -EBADFD;
	pthread_mutex_lock(&s->lock);
	if (s->capture) {
		ret = nrn_stream_refuse_locked(s, -EBUSY);
		pthread_mutex_unlock(&s->lock);
		return ret;
	}
	if (src->mem == NRN_MEM_HOST) {
		ret = nrn_host_copy_locked(s, src, src_off, dst, len, false);
		pthread_mutex_unlock(&s->lock);
		return ret;
	}
	ret = nrn_staging_ready(s);
	/* Two chunks in flight: DMA of the next while copying out the last. */
	while (!ret && (len || pend_len)) {
		size_t n = len < NRN_STAGING_CHUNK ? len : NRN_STAGING_CHUNK;

		if (n) {
			ret = nrn_ring_alloc_locked(s, &s->staging, n, 64, &off);
			if (ret)
				break;
			nrn_ring_commit_locked(s, &s->staging, off, n);
			ret = nrn_dma_locked(s, s->staging.buf, off, src, src_off, n);
			if (ret) {
				s->staging.count--;
				break;
			}
		}
		if (pend_len) {
			ret = nrn_stream_wait_point_locked(s, pend_point);
			if (ret)
				break;
			memcpy(p, s->staging.map + pend_off, pend_len);
			p += pend_len;
		}
		pend_off = off;
		pend_len = n;
		pend_point = s->point;
		src_off += n;
		len -= n;
	}
	/* Report errors of the stream's earlier work too, once. */
	if (!ret)
		ret = nrn_stream_sync_locked(s);
	else
		nrn_stream_sync_locked(s);
	pthread_mutex_unlock(&s->lock);
	return ret;
}

/*
 * The device's stream of @buf for a synchronous helper; a capturing one
 * refuses it (-EBUSY: the helper waits for results that do not exist).
 */
static int nrn_default_stream(struct nrn_buffer *buf, struct nrn_stream **sp)
{
	int ret;

	if (!buf)
		return -EINVAL;
	ret = nrn_device_stream(buf->dev, sp);
	if (ret)
		return ret;
	pthread_mutex_lock(&(*sp)->lock);
	if ((*sp)->capture)
		ret = nrn_stream_refuse_locked(*sp, -EBUSY);
	pthread_mutex_unlock(&(*sp)->lock);
	return ret;
}

NRN_EXPORT int nrn_copy_h2d(struct nrn_buffer *dst, size_t dst_off,
			    const void *src, size_t len)
{
	struct nrn_stream *s;
	int ret = nrn_default_stream(dst, &s);

	if (!ret)
		ret = nrn_stream_copy_h2d(s, dst, dst_off, src, len);
	return ret ? ret : nrn_stream_sync(s);
}

NRN_EXPORT int nrn_copy_d2h(void *dst, struct nrn_buffer *src, size_t src_off,
			    size_t len)
{
	struct nrn_stream *s;
	int ret = nrn_default_stream(src, &s);

	return ret ? ret : nrn_stream_copy_d2h(s, dst, src, src_off, len);
}

NRN_EXPORT int nrn_copy_buffer(struct nrn_buffer *dst, size_t dst_off,
			       struct nrn_buffer *src, size_t src_off, size_t len)
{
	struct nrn_stream *s;
	int ret = nrn_default_stream(dst, &s);

	if (!ret)
		ret = nrn_stream_copy_buffer(s, dst, dst_off, src, src_off, len);
	return ret ? ret : nrn_stream_sync(s);
}
