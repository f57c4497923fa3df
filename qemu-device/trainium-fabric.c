/*
 * Virtual Trainium accelerator: the fabric that joins cards by links
 * (docs/hardware.md "Links"), a device on no bus:
 *
 *   -device trainium-fabric,id=nl0,fabric-id=1,size=4[,topology=ring|mesh]
 *   -device trainium,fabric=nl0,fabric-rank=0 ...
 *
 * It knows which card holds each rank and keeps a card's memory alive
 * while another card's link engine writes into it: an engine holds the
 * destination (trn_fabric_get()) for one chunk at a time, and a card that
 * leaves (unplug) waits for the chunks in flight into it.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "hw/qdev-properties.h"
#include "trainium.h"
#include "trace.h"

enum { TRN_TOPO_RING, TRN_TOPO_MESH };

struct TrnFabric {
    DeviceState parent_obj;

    /* Properties, fixed once realized */
    uint16_t id;
    uint32_t size;
    char *topology_name;
    int topology;

    QemuMutex lock;       /* protects the arrays below */
    QemuCond idle;        /* an in-flight count dropped to 0 */
    TrnState *members[TRN_FABRIC_MAX];
    unsigned inflight[TRN_FABRIC_MAX];
    uint64_t gen[TRN_FABRIC_MAX];
};

unsigned trn_fabric_links(TrnFabric *f)
{
    if (f->topology == TRN_TOPO_MESH) {
        return f->size - 1;
    }
    return f->size >= 2 ? 2 : 0;
}

unsigned trn_fabric_peer(TrnFabric *f, unsigned rank, unsigned l)
{
    if (f->topology == TRN_TOPO_RING && l == 1) {
        return (rank + f->size - 1) % f->size;
    }
    return (rank + 1 + l) % f->size;
}

uint32_t trn_fabric_reg(TrnFabric *f, unsigned rank)
{
    return rank | (f->size << 8) | ((uint32_t)f->id << 16);
}

bool trn_fabric_present(TrnFabric *f, unsigned rank)
{
    bool up;

    qemu_mutex_lock(&f->lock);
    up = f->members[rank] != NULL;
    qemu_mutex_unlock(&f->lock);
    return up;
}

bool trn_fabric_join(TrnFabric *f, TrnState *s, unsigned rank, Error **errp)
{
    bool ok;

    qemu_mutex_lock(&f->lock);
    ok = !f->members[rank];
    if (ok) {
        f->members[rank] = s;
        f->gen[rank]++;
    }
    qemu_mutex_unlock(&f->lock);
    if (!ok) {
        error_setg(errp, "fabric %s: rank %u is already taken by another card",
                   object_get_canonical_path_component(OBJECT(f)), rank);
        return false;
    }
    trace_trainium_fabric_join(f->id, rank);
    return true;
}

void trn_fabric_leave(TrnFabric *f, unsigned rank)
{
    qemu_mutex_lock(&f->lock);
    f->members[rank] = NULL;
    while (f->inflight[rank]) {
        qemu_cond_wait(&f->idle, &f->lock);
    }
    qemu_mutex_unlock(&f->lock);
    trace_trainium_fabric_leave(f->id, rank);
}

TrnState *trn_fabric_get(TrnFabric *f, unsigned rank, uint64_t *gen)
{
    TrnState *s;

    qemu_mutex_lock(&f->lock);
    s = f->members[rank];
    if (s) {
        f->inflight[rank]++;
        *gen = f->gen[rank];
    }
    qemu_mutex_unlock(&f->lock);
    return s;
}

void trn_fabric_put(TrnFabric *f, unsigned rank)
{
    qemu_mutex_lock(&f->lock);
    assert(f->inflight[rank]);
    if (!--f->inflight[rank]) {
        qemu_cond_broadcast(&f->idle);
    }
    qemu_mutex_unlock(&f->lock);
}

/* ---- The device --------------------------------------------------------- */

/*
 * A bus-less device rather than a user-creatable -object: -object and
 * object-add only take the types of QEMU's QAPI schema (ObjectType), and
 * the device is dropped into QEMU without changing its schema. Created
 * on the command line before the cards that name it; it cannot be
 * hot-plugged or unplugged.
 */
static void trn_fabric_realize(DeviceState *dev, Error **errp)
{
    TrnFabric *f = TRAINIUM_FABRIC(dev);

    if (!f->id) {
        error_setg(errp, "trainium-fabric: fabric-id must be between 1 and "
                   "65535");
        return;
    }
    if (f->size < 1 || f->size > TRN_FABRIC_MAX) {
        error_setg(errp, "trainium-fabric: size (the number of ranks) must "
                   "be between 1 and %d%s", TRN_FABRIC_MAX,
                   f->size ? "" : "; it is required");
        return;
    }
    if (!f->topology_name || !strcmp(f->topology_name, "ring")) {
        f->topology = TRN_TOPO_RING;
    } else if (!strcmp(f->topology_name, "mesh")) {
        f->topology = TRN_TOPO_MESH;
    } else {
        error_setg(errp, "trainium-fabric: topology '%s' is not 'ring' or "
                   "'mesh'", f->topology_name);
        return;
    }
}

static void trn_fabric_init(Object *obj)
{
    TrnFabric *f = TRAINIUM_FABRIC(obj);

    qemu_mutex_init(&f->lock);
    qemu_cond_init(&f->idle);
}

static void trn_fabric_finalize(Object *obj)
{
    TrnFabric *f = TRAINIUM_FABRIC(obj);

    qemu_cond_destroy(&f->idle);
    qemu_mutex_destroy(&f->lock);
}

static const Property trn_fabric_props[] = {
    DEFINE_PROP_UINT16("fabric-id", TrnFabric, id, 1),
    DEFINE_PROP_UINT32("size", TrnFabric, size, 0),
    DEFINE_PROP_STRING("topology", TrnFabric, topology_name),
};

static void trn_fabric_class_init(ObjectClass *oc, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(oc);

    dc->realize = trn_fabric_realize;
    dc->hotpluggable = false;
    dc->desc = "Trainium card-to-card link fabric (size=ranks, "
               "topology=ring|mesh)";
    device_class_set_props(dc, trn_fabric_props);
    set_bit(DEVICE_CATEGORY_MISC, dc->categories);
}

static const TypeInfo trn_fabric_types[] = {
    {
        .name = TYPE_TRAINIUM_FABRIC,
        .parent = TYPE_DEVICE,
        .instance_size = sizeof(TrnFabric),
        .instance_init = trn_fabric_init,
        .instance_finalize = trn_fabric_finalize,
        .class_init = trn_fabric_class_init,
    },
};

DEFINE_TYPES(trn_fabric_types)
