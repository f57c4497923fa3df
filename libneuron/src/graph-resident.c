// SPDX-License-Identifier: MIT
/*
 * A graph launched again with the operands of its last launch runs as a
 * resident job: its instructions, bound to the job's buffer table once,
 * stay in device memory, and a launch is one SUBMIT of that kernel with
 * that table -- as a CUDA graph is uploaded once and each launch is one
 * command -- rather than every instruction issued again through the
 * stream's batch (nrn_graph_issue_locked(): an operand lookup, a site and
 * a copy per instruction, which the guest's CPU pays at each replay of a
 * decode step or a training step).
 *
 * The graph keeps the operands of its last launch (struct nrn_graph_job).
 * A launch with the same ones on the same device -- the second in a row
 * -- issues the graph alone in a fresh batch and, when the whole graph
 * went into that one batch, keeps a copy of its instructions and of its
 * buffer table: the kernel is written to a device buffer after the launch
 * and used from the next one on. A launch with other operands (a compiled
 * graph called on new inputs) issues as before and becomes the one to
 * compare with. The job holds a reference on each buffer of its table,
 * so no handle it names can be closed, nor its nrn_buffer be reused for
 * another, while the graph lives; SUBMIT gives each job its own
 * references, so destroying the graph while its jobs run is safe.
 * Nothing here changes what runs: the same instructions on the same
 * buffers, in the stream's order, with the same error sites.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"

struct nrn_graph_job {
	struct nrn_device *dev;
	/* The launch's operands: the arguments (copied), the arena. */
	struct nrn_graph_arg *args;
	struct nrn_buffer *arena;
	uint64_t arena_off;
	/* The resident kernel: NULL until a second launch like the first. */
	struct nrn_buffer *code;
	uint64_t len;
	/* Its buffer table, each buffer referenced. */
	unsigned int nslots;
	struct nrn_buffer *slots[DRM_NEURON_MAX_BOS];
	uint32_t access[DRM_NEURON_MAX_BOS];
	/* Between the snapshot and the upload: the instructions. */
	struct nisa_insn *insns;
};

void nrn_graph_job_free(struct nrn_graph_job *j)
{
	if (!j)
		return;
	for (unsigned int i = 0; i < j->nslots; i++)
		nrn_buffer_put(j->slots[i]);
	if (j->code)
		nrn_buffer_free(j->code);
	free(j->insns);
	free(j->args);
	free(j);
}

static bool nrn_graph_job_same(const struct nrn_graph_job *j, const struct nrn_graph *g,
			       struct nrn_device *dev, const struct nrn_graph_arg *args,
			       struct nrn_buffer *arena, uint64_t arena_off)
{
	if (!j || j->dev != dev || j->arena != arena || j->arena_off != arena_off)
		return false;
	for (unsigned int i = 0; i < g->nargs; i++)
		if (j->args[i].buf != args[i].buf || j->args[i].offset != args[i].offset ||
		    j->args[i].size != args[i].size)
			return false;
	return true;
}

/* Submit @j's kernel on @s, after what the stream holds. */
static int nrn_graph_job_submit_locked(struct nrn_stream *s, const struct nrn_graph *g,
				       const struct nrn_graph_job *j)
{
	struct drm_neuron_bo_ref refs[DRM_NEURON_MAX_BOS];
	struct drm_neuron_submit submit = { .engine = DRM_NEURON_ENGINE_CORE };
	int ret = nrn_stream_flush_locked(s);

	if (ret)
		return ret;
	for (unsigned int i = 0; i < j->nslots; i++)
		refs[i] = (struct drm_neuron_bo_ref){ .handle = j->slots[i]->handle,
						      .access = j->access[i] };
	submit.index = s->core;
	submit.kernel_handle = j->code->handle;
	submit.kernel_size = j->len;
	submit.bos = (uintptr_t)refs;
	submit.bo_count = j->nslots;
	/* The job is the graph's instructions 0.. in order: one run. */
	ret = nrn_sites_note_run_locked(s, g->id, g->origins, g->ninsns);
	if (ret)
		return ret;
	ret = nrn_stream_submit_locked(s, &submit);
	nrn_sites_commit_locked(s, ret ? 0 : submit.cookie);
	return ret;
}

int nrn_graph_job_launch_locked(struct nrn_stream *s, const struct nrn_graph *g,
				const struct nrn_graph_arg *args, struct nrn_buffer *arena,
				uint64_t arena_off, bool *snapshot)
{
	struct nrn_graph *mg = (struct nrn_graph *)g; /* the cache only */
	struct nrn_graph_job *j, *old = NULL;
	int ret = -EAGAIN;

	*snapshot = false;
	if (s->capture)
		return -EAGAIN;
	pthread_mutex_lock(&mg->lock);
	j = mg->job;
	if (nrn_graph_job_same(j, g, s->dev, args, arena, arena_off)) {
		if (j->code)
			ret = nrn_graph_job_submit_locked(s, g, j);
		else
			*snapshot = !j->insns && g->ninsns; /* the second like the first */
	} else {
		/* The operands to compare the next launch with. */
		j = calloc(1, sizeof(*j));
		if (j && g->nargs)
			j->args = malloc(g->nargs * sizeof(*j->args));
		if (j && (j->args || !g->nargs)) {
			if (g->nargs)
				memcpy(j->args, args, g->nargs * sizeof(*j->args));
			j->dev = s->dev;
			j->arena = arena;
			j->arena_off = arena_off;
			old = mg->job;
			mg->job = j;
		} else if (j) {
			free(j);
		}
	}
	pthread_mutex_unlock(&mg->lock);
	nrn_graph_job_free(old);
	return ret;
}

void nrn_graph_job_snapshot_locked(struct nrn_stream *s, const struct nrn_graph *g,
				   const struct nrn_graph_arg *args,
				   struct nrn_buffer *arena, uint64_t arena_off)
{
	struct nrn_graph *mg = (struct nrn_graph *)g;
	size_t len = (size_t)s->batch.count * sizeof(struct nisa_insn);
	struct nisa_insn *insns;
	struct nrn_graph_job *j;

	/* Only a graph that went whole into one batch of its own. */
	if (s->batch.count != g->ninsns)
		return;
	insns = malloc(len);
	if (!insns)
		return;
	memcpy(insns, s->batch.insns, len);
	pthread_mutex_lock(&mg->lock);
	j = mg->job;
	if (nrn_graph_job_same(j, g, s->dev, args, arena, arena_off) && !j->code &&
	    !j->insns) {
		j->insns = insns;
		j->len = len;
		j->nslots = s->batch.nslots;
		for (unsigned int i = 0; i < j->nslots; i++) {
			nrn_buffer_get(s->slots[i]);
			j->slots[i] = s->slots[i];
			j->access[i] = s->access[i];
		}
		insns = NULL;
	}
	pthread_mutex_unlock(&mg->lock);
	free(insns);
}

void nrn_graph_job_upload(const struct nrn_graph *g, struct nrn_device *dev)
{
	struct nrn_graph *mg = (struct nrn_graph *)g;
	struct nrn_buffer *code = NULL;
	struct nrn_graph_job *j;
	void *map;

	/*
	 * Under the graph's lock (not the stream's): a launch meanwhile
	 * replaces the job only once this one is installed or dropped.
	 */
	pthread_mutex_lock(&mg->lock);
	j = mg->job;
	if (j && j->dev == dev && j->insns && !j->code) {
		if (!nrn_buffer_alloc(dev, j->len, NRN_MEM_DEVICE, &code) &&
		    !nrn_buffer_map(code, &map)) {
			memcpy(map, j->insns, j->len);
			/* The writes land before any job that reads them. */
			__atomic_thread_fence(__ATOMIC_SEQ_CST);
			j->code = code;
			code = NULL;
		}
		/* Not kept: the next launch like this one snapshots again. */
		free(j->insns);
		j->insns = NULL;
		if (!j->code) {
			for (unsigned int i = 0; i < j->nslots; i++)
				nrn_buffer_put(j->slots[i]);
			j->nslots = 0;
		}
	}
	pthread_mutex_unlock(&mg->lock);
	if (code)
		nrn_buffer_free(code);
}

bool nrn_graph_job_resident(const struct nrn_graph *g)
{
	struct nrn_graph *mg = (struct nrn_graph *)g; /* the cache only */
	bool resident;

	pthread_mutex_lock(&mg->lock);
	resident = mg->job && mg->job->code;
	pthread_mutex_unlock(&mg->lock);
	return resident;
}
