/* SPDX-License-Identifier: MIT */
/*
 * libneuron: the user-space HAL of the virtual Trainium card.
 *
 * Conventions: every function that can fail returns 0 (or a count) on
 * success and a negative errno on failure; nrn_strerror() explains it.
 * Objects are opaque; all functions are thread-safe unless a comment says
 * otherwise. The only process-wide state is none: each nrn_device is
 * independent and devices are enumerated from sysfs on each call.
 */
#ifndef LIBNEURON_H
#define LIBNEURON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NRN_VERSION_MAJOR 0
#define NRN_VERSION_MINOR 1

struct nrn_device;
struct nrn_buffer;

/* ---- Devices ---------------------------------------------------------- */

/* Everything GET_PARAM reports, plus where the card is. */
struct nrn_device_info {
	unsigned int index;		/* libneuron's device index */
	unsigned int minor;		/* N of /dev/accel/accelN */
	char pci_address[16];		/* "0000:01:00.0" */
	char driver[16];		/* kernel driver name */
	char driver_version[16];	/* "major.minor.patch" */
	uint32_t device_id;		/* PCI device ID */
	uint32_t revision;		/* PCI revision */
	uint32_t model_version;		/* major << 16 | minor */
	uint64_t capabilities;		/* DRM_NEURON_CAP_* */
	uint32_t num_cores;
	uint32_t num_dma_queues;
	uint64_t mem_size;		/* device memory, bytes */
	uint64_t mem_free;		/* device memory not allocated, bytes */
	uint32_t isa_version;
};

/* Number of cards driven by neuron.ko (0 when none or no driver). */
int nrn_device_count(void);

/* Open card @index (0 .. nrn_device_count() - 1). */
int nrn_device_open(unsigned int index, struct nrn_device **devp);
void nrn_device_close(struct nrn_device *dev);
int nrn_device_info(struct nrn_device *dev, struct nrn_device_info *info);

/* ---- Buffers ---------------------------------------------------------- */

enum nrn_mem {
	NRN_MEM_DEVICE = 0,		/* the card's memory */
	NRN_MEM_HOST = 1,		/* system memory the card reaches by DMA */
};

int nrn_buffer_alloc(struct nrn_device *dev, size_t size, enum nrn_mem where,
		     struct nrn_buffer **bufp);
/* Frees the buffer; work still using it keeps it alive until done. */
void nrn_buffer_free(struct nrn_buffer *buf);
size_t nrn_buffer_size(const struct nrn_buffer *buf);
enum nrn_mem nrn_buffer_mem(const struct nrn_buffer *buf);
/*
 * CPU address of the buffer's contents (mapped on first call, unmapped at
 * free). Device memory is mapped write-combined: fine to write, slow to
 * read; copy it out with nrn_copy_d2h() instead.
 */
int nrn_buffer_map(struct nrn_buffer *buf, void **ptr);

/* ---- Copies (synchronous) --------------------------------------------- */

/* Ordinary user memory to a buffer, and back. */
int nrn_copy_h2d(struct nrn_buffer *dst, size_t dst_off, const void *src,
		 size_t len);
int nrn_copy_d2h(void *dst, struct nrn_buffer *src, size_t src_off,
		 size_t len);
/* Buffer to buffer on the card's DMA engine. */
int nrn_copy_buffer(struct nrn_buffer *dst, size_t dst_off,
		    struct nrn_buffer *src, size_t src_off, size_t len);

/* ---- Errors ----------------------------------------------------------- */

/* A message for a negative errno returned by libneuron (never NULL). */
const char *nrn_strerror(int err);

#ifdef __cplusplus
}
#endif

#endif /* LIBNEURON_H */
