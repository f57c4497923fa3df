// SPDX-License-Identifier: MIT
/*
 * Fork: a child made by fork() (no exec) inherits its parent's device
 * files, mappings and locks as they were at the fork. The file is the
 * parent's (the same open file: its GEM handles and syncobjs are the
 * parent's objects), a lock may be held by a thread the child does not
 * have, and a mapping shows the parent's device memory. So in the child
 * every call on an object of a device opened before the fork fails at once
 * with -EBADFD, before any lock, and frees of such objects release nothing
 * the parent uses (no handle or syncobj is closed). Devices the child opens
 * itself work.
 *
 * A generation counter, bumped by a pthread_atfork() child handler, tells
 * them apart: each device records the generation it was opened in.
 */
#include <pthread.h>

#include "internal.h"

atomic_uint nrn_fork_generation;
atomic_int nrn_devices_open;
static atomic_bool nrn_forked_child;

static void nrn_atfork_child(void)
{
	atomic_fetch_add_explicit(&nrn_fork_generation, 1, memory_order_relaxed);
	if (atomic_load_explicit(&nrn_devices_open, memory_order_relaxed) > 0)
		atomic_store_explicit(&nrn_forked_child, true, memory_order_relaxed);
}

__attribute__((constructor)) static void nrn_fork_init(void)
{
	pthread_atfork(NULL, NULL, nrn_atfork_child);
}

NRN_EXPORT int nrn_forked(void)
{
	return atomic_load_explicit(&nrn_forked_child, memory_order_relaxed);
}
