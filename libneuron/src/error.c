// SPDX-License-Identifier: MIT
/* Error strings: what each errno means when libneuron returns it. */
#include <errno.h>
#include <string.h>

#include "internal.h"

struct nrn_errmsg {
	int err;
	const char *msg;
};

/* Meanings specific to the card; anything else is the C library's text. */
static const struct nrn_errmsg nrn_errmsgs[] = {
	{ ENODEV, "no such neuron device (or it was removed)" },
	{ EIO, "the device reported an error executing the job" },
	{ ETIMEDOUT, "the job hung and its queue was reset" },
	{ ECANCELED, "the job was cancelled by a reset caused by another job" },
	{ ENOMEM, "out of memory (device memory full?)" },
	{ EXDEV, "the buffers belong to different devices" },
	{ ENOENT, "no such buffer or syncobj handle" },
	{ EBADFD, "the device was opened before fork() made this process: a forked "
		  "child cannot use its parent's device (open it in the child, or "
		  "start the process with spawn/exec)" },
};

NRN_EXPORT const char *nrn_strerror(int err)
{
	size_t i;

	if (err > 0)
		err = -err;
	if (err == 0)
		return "success";
	for (i = 0; i < sizeof(nrn_errmsgs) / sizeof(nrn_errmsgs[0]); i++)
		if (nrn_errmsgs[i].err == -err)
			return nrn_errmsgs[i].msg;
	return strerror(-err);
}
