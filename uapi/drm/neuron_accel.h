/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR MIT) */
/*
 * Kernel interface of neuron.ko, the DRM accel driver for the virtual
 * Trainium card. This is the only kernel header user space includes.
 */
#ifndef __UAPI_DRM_NEURON_ACCEL_H__
#define __UAPI_DRM_NEURON_ACCEL_H__

#include "drm.h"
#include "neuron_card.h"

#if defined(__cplusplus)
extern "C" {
#endif

#define DRM_NEURON_GET_PARAM		0x00
#define DRM_NEURON_BO_CREATE		0x01
#define DRM_NEURON_BO_INFO		0x02
#define DRM_NEURON_SUBMIT		0x03
#define DRM_NEURON_WAIT			0x04

#define DRM_IOCTL_NEURON_GET_PARAM \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NEURON_GET_PARAM, struct drm_neuron_get_param)
#define DRM_IOCTL_NEURON_BO_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NEURON_BO_CREATE, struct drm_neuron_bo_create)
#define DRM_IOCTL_NEURON_BO_INFO \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NEURON_BO_INFO, struct drm_neuron_bo_info)
#define DRM_IOCTL_NEURON_SUBMIT \
	DRM_IOW(DRM_COMMAND_BASE + DRM_NEURON_SUBMIT, struct drm_neuron_submit)
#define DRM_IOCTL_NEURON_WAIT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NEURON_WAIT, struct drm_neuron_wait)

/**
 * DOC: contexts and fences
 *
 * Every open file of /dev/accel/accelN is a context: buffer handles belong
 * to it, and its jobs run in order per queue. A job's completion is
 * signalled through a DRM syncobj (binary, or a timeline point), waited on
 * with the generic DRM_IOCTL_SYNCOBJ_* ioctls. A job that fails signals its
 * fence with an error, visible through the sync_file status of the
 * syncobj's fence: -EIO when the device reported an error, -ETIMEDOUT when
 * the job hung and its queue was reset, -ECANCELED when it was removed from
 * the device by a reset caused by another job, -ENODEV when the card went
 * away. No physical or bus address ever crosses this interface.
 */

/* GET_PARAM parameters (all read-only). */
#define DRM_NEURON_PARAM_DEVICE_ID	0	/* PCI device ID */
#define DRM_NEURON_PARAM_REVISION	1	/* PCI revision */
#define DRM_NEURON_PARAM_MODEL_VERSION	2	/* major << 16 | minor */
#define DRM_NEURON_PARAM_CAPABILITIES	3	/* DRM_NEURON_CAP_* bits */
#define DRM_NEURON_PARAM_NUM_CORES	4	/* NeuronCores */
#define DRM_NEURON_PARAM_NUM_DMA_QUEUES	5	/* DMA engine queues */
#define DRM_NEURON_PARAM_MEM_SIZE	6	/* device memory, bytes */
#define DRM_NEURON_PARAM_MEM_FREE	7	/* device memory not allocated, bytes */
#define DRM_NEURON_PARAM_ISA_VERSION	8	/* instruction set version */
#define DRM_NEURON_PARAM_MAX_HOST_BO	9	/* largest host buffer, bytes */
/* host memory a context's jobs and pinned buffers may pin, bytes */
#define DRM_NEURON_PARAM_MAX_PINNED	10
#define DRM_NEURON_PARAM_NUM_LINKS	11	/* card-to-card links, 0 when none */
/* id << 16 | size << 8 | rank of the card's fabric; 0 when in none */
#define DRM_NEURON_PARAM_FABRIC		12
#define DRM_NEURON_PARAM_LINK_PEERS	13	/* byte l: fabric rank at link l's other end */
#define DRM_NEURON_PARAM_LINKS_UP	14	/* bit l: link l's peer is there, not removed */

/* Capability bits of DRM_NEURON_PARAM_CAPABILITIES. */
#define DRM_NEURON_CAP_DMA		0x1ULL
#define DRM_NEURON_CAP_COMPUTE		0x2ULL
#define DRM_NEURON_CAP_BF16		0x4ULL
#define DRM_NEURON_CAP_HOST_BO		0x8ULL
#define DRM_NEURON_CAP_LINK		0x10ULL	/* link jobs, peer buffers */
#define DRM_NEURON_CAP_PINNED_BO	0x20ULL	/* BO_CREATE takes DRM_NEURON_BO_PINNED */

/**
 * DOC: resource limits
 *
 * Every size and count user space passes is bounded; beyond a bound the
 * ioctl fails and changes nothing:
 *
 * - a device buffer: at most the card's memory (%DRM_NEURON_PARAM_MEM_SIZE);
 *   larger, or more than is free now, returns -ENOMEM;
 * - a host buffer: at most %DRM_NEURON_PARAM_MAX_HOST_BO bytes (the
 *   system's RAM unless the administrator set neuron.ko's max_host_bo_mb,
 *   never more than 1 TiB); larger returns -E2BIG. A host buffer costs
 *   memory only for the pages touched (by the CPU through a mapping, or by
 *   a job), charged to the memory cgroup of the process that touched them;
 * - all buffers of a card together: just under 1 TiB of mmap offsets
 *   (host buffers take theirs at creation, device buffers at their first
 *   BO_INFO); past it, -ENOSPC;
 * - host memory pinned: a DMA job pins the pages of the host ranges its
 *   copies name (page-rounded, counted once per copy operand), from
 *   SUBMIT until it has completed and been freed (moments later), and
 *   nothing else. The jobs in flight (submitted, not completed) of one
 *   context may pin at most %DRM_NEURON_PARAM_MAX_PINNED bytes (half the
 *   RAM unless max_pinned_mb is set): a job that alone pins more fails
 *   with -E2BIG, one that does not fit beside the context's jobs in flight
 *   with -ENOMEM (it may succeed once they have completed). A host
 *   buffer created with %DRM_NEURON_BO_PINNED counts in the same budget,
 *   its whole size, for as long as it exists: -E2BIG if it alone is larger
 *   than the budget, -ENOMEM if it does not fit beside what the context's
 *   pinned buffers and jobs in flight hold;
 * - a SUBMIT: 1..%DRM_NEURON_MAX_COPIES copies, 0..%DRM_NEURON_MAX_BOS
 *   buffer-table entries, 0..%DRM_NEURON_MAX_SYNCS in-syncs, a kernel of
 *   1..%NISA_MAX_INSNS instructions; beyond, -EINVAL.
 */

/**
 * struct drm_neuron_get_param - query a device parameter
 */
struct drm_neuron_get_param {
	/** @param: in, one of %DRM_NEURON_PARAM_* */
	__u32 param;
	/** @pad: must be zero */
	__u32 pad;
	/** @value: out, the parameter's value */
	__u64 value;
};

/* Placement of a buffer object. */
#define DRM_NEURON_BO_DEVICE		0	/* device memory, mmap write-combined */
#define DRM_NEURON_BO_HOST		1	/* system memory the device reaches by DMA */

/* Flags of struct drm_neuron_bo_create. */
#define DRM_NEURON_BO_PINNED		0x1	/* host buffer, pinned while it exists */

/**
 * struct drm_neuron_bo_create - allocate a buffer object
 *
 * The size is rounded up to the page size. A device buffer larger than the
 * card's memory, or than what is free of it, returns -ENOMEM; a host buffer
 * larger than %DRM_NEURON_PARAM_MAX_HOST_BO returns -E2BIG (see "resource
 * limits"). A size of 0, an unknown placement, unknown @flags, nonzero
 * @pad, or a nonzero @handle return -EINVAL.
 *
 * A host buffer created with %DRM_NEURON_BO_PINNED has all its pages
 * allocated, pinned and mapped for the device at creation, until the
 * buffer is freed: DMA jobs naming it pin nothing, which saves them the
 * per-page work on large ranges. Its whole size counts in the creating
 * context's budget of pinned memory for its lifetime (-E2BIG, -ENOMEM:
 * see "resource limits"); a buffer of more discontiguous runs of pages
 * than the device takes in one scatter-gather list (2^20) returns -E2BIG,
 * one whose list the kernel cannot allocate -ENOMEM. The flag is
 * refused (-EINVAL) with %DRM_NEURON_BO_DEVICE, whose memory never moves.
 * A driver that takes the flag reports %DRM_NEURON_CAP_PINNED_BO.
 */
struct drm_neuron_bo_create {
	/** @size: in, bytes, > 0 */
	__u64 size;
	/** @placement: in, %DRM_NEURON_BO_DEVICE or %DRM_NEURON_BO_HOST */
	__u32 placement;
	/** @flags: in, 0 or %DRM_NEURON_BO_PINNED (host buffers only) */
	__u32 flags;
	/**
	 * @handle: out only, the new GEM handle, freed with
	 * DRM_IOCTL_GEM_CLOSE. Must be zero on input (-EINVAL otherwise), so
	 * that a later version may give it a meaning there.
	 */
	__u32 handle;
	/** @pad: must be zero */
	__u32 pad;
};

/**
 * struct drm_neuron_bo_info - describe a buffer object
 */
struct drm_neuron_bo_info {
	/** @handle: in */
	__u32 handle;
	/** @placement: out, %DRM_NEURON_BO_* */
	__u32 placement;
	/** @size: out, bytes */
	__u64 size;
	/** @mmap_offset: out, offset to pass to mmap() on the device file */
	__u64 mmap_offset;
};

/* Engines a job is submitted to. */
#define DRM_NEURON_ENGINE_DMA		0	/* DMA engine queue @index */
#define DRM_NEURON_ENGINE_CORE		1	/* NeuronCore @index */
#define DRM_NEURON_ENGINE_LINK		2	/* link @index's DMA engine */

#define DRM_NEURON_MAX_COPIES		128
#define DRM_NEURON_MAX_SYNCS		64
#define DRM_NEURON_MAX_BOS		64

/**
 * struct drm_neuron_copy - one copy of a DMA job
 *
 * Copies @size bytes from (@src_handle, @src_offset) to (@dst_handle,
 * @dst_offset). Both ranges must lie within their buffers (-EINVAL
 * otherwise, as is a @size of 0); either buffer may be in device or host
 * memory. Of a host buffer, only the pages of the range are pinned, from
 * SUBMIT until the job completes (see "resource limits"); a buffer created
 * with %DRM_NEURON_BO_PINNED is pinned already and pins nothing more.
 */
struct drm_neuron_copy {
	__u32 src_handle;
	__u32 dst_handle;
	__u64 src_offset;
	__u64 dst_offset;
	__u64 size;
};

/**
 * struct drm_neuron_link_copy - one copy of a link job
 *
 * Moves @size bytes from (@src_handle, @src_offset), a device buffer of
 * this card, to (@dst_handle, @dst_offset), a device buffer of the card at
 * the other end of the job's link: a buffer that card's file exported as a
 * dma-buf and this file imported (PRIME). @reduce is %NISA_REDUCE_NONE
 * (store, @dtype 0) or combines each element with the destination's
 * (another enum nisa_link_reduce; @dtype %NISA_F32, %NISA_BF16 or %NISA_F16,
 * @size and both offsets multiples of its size).
 *
 * -EINVAL for a range outside its buffer, a @size of 0 or a bad
 * @reduce/@dtype/alignment; -EXDEV when @src_handle is not a device buffer
 * of this card or @dst_handle not one of the link's peer. An imported
 * buffer of another card (a "peer buffer") is only a link copy's
 * destination: DMA and compute jobs naming it fail with -EXDEV, and it
 * cannot be mapped (mmap fails with -EOPNOTSUPP; map it through the
 * exporting card's file).
 */
struct drm_neuron_link_copy {
	__u32 src_handle;
	__u32 dst_handle;
	__u64 src_offset;
	__u64 dst_offset;
	__u64 size;
	/** @reduce: enum nisa_link_reduce */
	__u32 reduce;
	/** @dtype: enum nisa_dtype when reducing, else 0 */
	__u32 dtype;
};

/* Access a compute job has to a buffer. */
#define DRM_NEURON_ACCESS_READ		NISA_ACCESS_READ
#define DRM_NEURON_ACCESS_WRITE		NISA_ACCESS_WRITE

/**
 * struct drm_neuron_bo_ref - a buffer a compute job uses
 *
 * The buffers of a compute job are the slots of its kernel's buffer table,
 * in order: slot i is the i-th entry. The device refuses any access a
 * slot's rights do not allow.
 */
struct drm_neuron_bo_ref {
	/** @handle: a device-memory buffer */
	__u32 handle;
	/** @access: %DRM_NEURON_ACCESS_READ and/or %DRM_NEURON_ACCESS_WRITE */
	__u32 access;
};

/**
 * struct drm_neuron_sync - a syncobj and, for a timeline, a point
 */
struct drm_neuron_sync {
	/** @handle: syncobj handle */
	__u32 handle;
	/** @pad: must be zero */
	__u32 pad;
	/** @point: timeline point, 0 for a binary syncobj */
	__u64 point;
};

/**
 * struct drm_neuron_submit - submit a job to a queue
 *
 * A DMA job (@engine %DRM_NEURON_ENGINE_DMA) is a list of copies, executed
 * in order; the compute fields must be zero. A link job
 * (%DRM_NEURON_ENGINE_LINK) is the same with struct drm_neuron_link_copy
 * entries at @copies: it fails with -ENOLINK at SUBMIT when the link's
 * peer is absent, and its fence with -ENODEV when the peer goes away
 * before it has run. A compute job
 * (%DRM_NEURON_ENGINE_CORE) runs the kernel at (@kernel_handle,
 * @kernel_offset), @kernel_size bytes of instructions of %NISA_INSN_SIZE
 * bytes each (the card's instruction set, which neuron.ko does not
 * interpret), in device memory, with @bos as its buffer table; the DMA
 * fields must be zero.
 *
 * The job starts once every in-sync has signalled; an in-sync may come from
 * another card's file (a syncobj shared through DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD
 * and _FD_TO_HANDLE), which orders jobs across cards. When an in-sync's
 * fence failed, the job does not run: its fence fails with the same error.
 * When it completes, the
 * out-sync (if @out_sync.handle is not 0) is signalled with the job's
 * fence: replaced for a binary syncobj, added at @out_sync.point for a
 * timeline. Jobs of one context on one queue run in submission order.
 *
 * Returns 0, or: -EINVAL for a malformed request (see each field), -ENOENT
 * for an unknown buffer or syncobj handle, -EFAULT for an unreadable
 * array, -E2BIG or -ENOMEM when the job would pin more host memory than
 * the context may (see "resource limits"), -ENODEV once the card is gone.
 */
struct drm_neuron_submit {
	/** @engine: %DRM_NEURON_ENGINE_DMA, _CORE or _LINK */
	__u32 engine;
	/** @index: queue index within the engine */
	__u32 index;
	/** @flags: must be zero */
	__u32 flags;
	/** @pad: must be zero */
	__u32 pad;
	/**
	 * @copies: DMA: user pointer to struct drm_neuron_copy[]; link:
	 * struct drm_neuron_link_copy[]
	 */
	__u64 copies;
	/**
	 * @copy_count: DMA: number of copies, 1..%DRM_NEURON_MAX_COPIES
	 * (-EINVAL otherwise)
	 */
	__u32 copy_count;
	/** @kernel_handle: compute: the device buffer holding the kernel */
	__u32 kernel_handle;
	/** @kernel_offset: compute: byte offset of the kernel in it */
	__u64 kernel_offset;
	/**
	 * @kernel_size: compute: bytes, a multiple of %NISA_INSN_SIZE,
	 * 1..%NISA_MAX_INSNS instructions (-EINVAL otherwise)
	 */
	__u64 kernel_size;
	/** @bos: compute: user pointer to struct drm_neuron_bo_ref[] */
	__u64 bos;
	/**
	 * @bo_count: compute: entries of @bos, 0..%DRM_NEURON_MAX_BOS
	 * (-EINVAL otherwise)
	 */
	__u32 bo_count;
	/**
	 * @in_sync_count: entries of @in_syncs, 0..%DRM_NEURON_MAX_SYNCS
	 * (-EINVAL otherwise)
	 */
	__u32 in_sync_count;
	/** @in_syncs: user pointer to struct drm_neuron_sync[] to wait for */
	__u64 in_syncs;
	/** @out_sync: the syncobj to signal, handle 0 for none */
	struct drm_neuron_sync out_sync;
	/**
	 * @cookie: in, any value, not interpreted: when the device reports
	 * an error in this job, DRM_IOCTL_NEURON_WAIT returns it as
	 * @error_cookie, for this job and for every job its failure passes
	 * on to, so that user space knows which of its jobs failed. (Added
	 * in driver version 0.2; an older user space's shorter struct has
	 * it 0.)
	 */
	__u64 cookie;
};

/* @error_insn when the device named no instruction. */
#define DRM_NEURON_NO_INSN		0xffffffffu

/**
 * struct drm_neuron_wait - wait for a job and read how it ended
 *
 * Waits until the fence at (@handle, @point) signals -- the fence of a job
 * submitted with it as out-sync -- and reports the job's status. One call
 * does what a syncobj wait followed by a status query would.
 *
 * When the device reported an error (@status -EIO), it happened in this
 * job or in a job whose failure passed on to it through its in-syncs; that
 * job is the one submitted with @error_cookie, and @error_insn is the
 * index of its kernel's instruction that failed (a compute job whose
 * instruction failed: 0 for the kernel's first instruction), else
 * %DRM_NEURON_NO_INSN.
 *
 * @error_insn, @pad and @error_cookie were appended in driver version 0.2
 * (DRM_IOCTL_VERSION). The DRM core copies in and out only the size of
 * struct the caller's ioctl number encodes (zero-filling the rest of the
 * kernel's on input), so a program built with the older 32-byte struct
 * works unchanged and sees none of them.
 *
 * Returns 0 when the fence signalled (whatever the job's outcome, which is
 * in @status), -ETIME when @timeout_ns passed first, -ENOENT for an unknown
 * handle or a point with no fence yet.
 */
struct drm_neuron_wait {
	/** @handle: in, syncobj handle */
	__u32 handle;
	/** @flags: in, must be zero */
	__u32 flags;
	/** @point: in, timeline point, 0 for a binary syncobj */
	__u64 point;
	/** @timeout_ns: in, relative timeout; negative waits forever */
	__s64 timeout_ns;
	/**
	 * @status: out, 0 when the job succeeded, else a negative errno (see
	 * "contexts and fences")
	 */
	__s32 status;
	/**
	 * @device_error: out, when @status is -EIO: the device's error code
	 * (NISA_ERR_* of docs/hardware.md), else 0
	 */
	__u32 device_error;
	/**
	 * @error_insn: out, when @status is -EIO: the index of the
	 * instruction that failed in the kernel of the job where the error
	 * happened, or %DRM_NEURON_NO_INSN when the device named none (an
	 * error of the job's descriptor or of a DMA job); else
	 * %DRM_NEURON_NO_INSN
	 */
	__u32 error_insn;
	/** @pad: out, zero */
	__u32 pad;
	/**
	 * @error_cookie: out, when @status is -EIO: the @cookie of the job
	 * where the device reported the error (see struct drm_neuron_submit),
	 * else 0
	 */
	__u64 error_cookie;
};

#if defined(__cplusplus)
}
#endif

#endif /* __UAPI_DRM_NEURON_ACCEL_H__ */
