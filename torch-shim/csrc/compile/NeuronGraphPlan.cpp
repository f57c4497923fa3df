// SPDX-License-Identifier: MIT
// Signatures and plans of compiled graphs (see NeuronGraphPlan.h).
#include <ATen/core/TensorBody.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/TensorImpl.h>

#include <cstring>
#include <unordered_map>

#include "NeuronGraphPlan.h"

namespace torch_neuron {
namespace {

constexpr auto kNeuron = c10::DeviceType::PrivateUse1;
// CPU tensor arguments up to this size are part of the signature by value
// (a capture bakes what the host reads of them); larger ones are refused.
constexpr size_t kCpuValueBytes = 256;

enum Tag : int64_t { kTensor = 1, kCpuTensor, kInt, kDouble, kBool, kNone };

int64_t double_bits(double d) {
  int64_t v;
  std::memcpy(&v, &d, sizeof v);
  return v;
}

// Byte position of @t's first element in its buffer, and one past its last.
struct Extent {
  nrn_buffer* buf;
  int64_t lo, hi;
};

Extent extent(const at::Tensor& t) {
  DeviceSpan sp = storage_span(t.storage());
  int64_t item = static_cast<int64_t>(t.itemsize());
  int64_t lo = static_cast<int64_t>(sp.offset) + t.storage_offset() * item;
  int64_t last = 0;
  for (int64_t d = 0; d < t.dim(); d++) {
    if (t.size(d) == 0)
      return {sp.buf, lo, lo};
    last += (t.size(d) - 1) * t.stride(d);
  }
  return {sp.buf, lo, lo + (last + 1) * item};
}

// Per argument, the first argument whose tensor shares its storage (itself
// when none before it does); -1 for arguments that are no defined tensor.
// One pass over a hash map: a compiled optimizer step has hundreds of
// arguments, and comparing each with every one before it cost 4.4 ms per
// launch of a 140-argument graph under TCG. Sharing means the same
// StorageImpl, which is what is_alias_of() tests for device storages (its
// other case, storages made by the refcounted deleter, is CPU shared memory).
std::vector<int64_t> storage_leaders(const c10::List<c10::IValue>& args) {
  std::vector<int64_t> leader(args.size(), -1);
  std::unordered_map<const c10::StorageImpl*, int64_t> first;
  first.reserve(args.size());
  for (size_t i = 0; i < args.size(); i++) {
    const c10::IValue& v = args.get(i);
    if (!v.isTensor() || !v.toTensor().defined())
      continue;
    auto it = first.emplace(v.toTensor().storage().unsafeGetStorageImpl(),
                            static_cast<int64_t>(i)).first;
    leader[i] = it->second;
  }
  return leader;
}

void push_geometry(const at::Tensor& t, Signature* sig) {
  sig->push_back(static_cast<int64_t>(t.scalar_type()));
  sig->push_back(t.dim());
  for (int64_t s : t.sizes())
    sig->push_back(s);
  for (int64_t s : t.strides())
    sig->push_back(s);
  sig->push_back((t.is_conj() ? 1 : 0) | (t.is_neg() ? 2 : 0));
}

c10::Storage new_storage(c10::DeviceIndex dev, int64_t nbytes) {
  c10::DeviceGuard guard(c10::Device(kNeuron, dev));
  return c10::Storage(c10::Storage::use_byte_size_t(), static_cast<size_t>(nbytes),
                      c10::GetAllocator(kNeuron), /*resizable=*/true);
}

at::Tensor tensor_on(const c10::Storage& st, const PlanOutput& o, int64_t offset) {
  auto t = at::detail::make_tensor<c10::TensorImpl>(
      c10::Storage(st), c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
      c10::scalarTypeToTypeMeta(static_cast<at::ScalarType>(o.dtype)));
  t.unsafeGetTensorImpl()->set_sizes_and_strides(o.sizes, o.strides, offset);
  return t;
}

// Reads @ints front to back, failing loudly past its end.
struct Reader {
  const std::vector<int64_t>& v;
  size_t at = 0;
  int64_t next() {
    TORCH_CHECK(at < v.size(), "neuron: compiled graph plan: truncated");
    return v[at++];
  }
  int64_t count(int64_t max) {
    int64_t n = next();
    TORCH_CHECK(n >= 0 && n <= max, "neuron: compiled graph plan: bad count ", n);
    return n;
  }
};

constexpr int64_t kPlanVersion = 1;
constexpr int64_t kMaxItems = 1 << 20;

}  // namespace

bool graph_signature(const c10::List<c10::IValue>& args, Signature* sig,
                     std::string* why) {
  sig->clear();
  std::vector<int64_t> leaders = storage_leaders(args);
  for (size_t i = 0; i < args.size(); i++) {
    const c10::IValue& v = args.get(i);
    if (v.isTensor()) {
      const at::Tensor& t = v.toTensor();
      if (!t.defined()) {
        sig->push_back(kNone);
        continue;
      }
      if (t.layout() != c10::kStrided) {
        *why = "argument " + std::to_string(i) + " is a " + c10::toString(t.layout()) +
               " tensor";
        return false;
      }
      if (t.device().type() == kNeuron) {
        sig->push_back(kTensor);
        sig->push_back(t.device().index());
        push_geometry(t, sig);
        int64_t leader = leaders[i] == static_cast<int64_t>(i) ? -1 : leaders[i];
        sig->push_back(leader);
        if (leader >= 0) {
          const at::Tensor& l = args.get(leader).toTensor();
          sig->push_back(t.storage_offset() * static_cast<int64_t>(t.itemsize()) -
                         l.storage_offset() * static_cast<int64_t>(l.itemsize()));
        }
      } else if (t.device().is_cpu()) {
        size_t nbytes = static_cast<size_t>(t.numel()) * t.itemsize();
        if (nbytes > kCpuValueBytes) {
          *why = "argument " + std::to_string(i) + " is a CPU tensor of " +
                 std::to_string(nbytes) + " bytes (its values would be baked "
                 "into the kernel; up to " + std::to_string(kCpuValueBytes) + ")";
          return false;
        }
        sig->push_back(kCpuTensor);
        push_geometry(t, sig);
        at::Tensor c = t.is_contiguous() ? t : t.contiguous();
        std::vector<int64_t> words((nbytes + 7) / 8, 0);
        if (nbytes)
          std::memcpy(words.data(), c.const_data_ptr(), nbytes);
        sig->insert(sig->end(), words.begin(), words.end());
      } else {
        *why = "argument " + std::to_string(i) + " is on " + t.device().str();
        return false;
      }
    } else if (v.isInt()) {
      sig->push_back(kInt);
      sig->push_back(v.toInt());
    } else if (v.isDouble()) {
      sig->push_back(kDouble);
      sig->push_back(double_bits(v.toDouble()));
    } else if (v.isBool()) {
      sig->push_back(kBool);
      sig->push_back(v.toBool());
    } else if (v.isNone()) {
      sig->push_back(kNone);
    } else {
      *why = "argument " + std::to_string(i) + " is a " + v.tagKind();
      return false;
    }
  }
  return true;
}

size_t GraphPlan::nargs() const {
  size_t n = regions.size();
  for (int64_t b : fresh)
    n += b > 0;
  return n;
}

std::vector<int64_t> GraphPlan::encode() const {
  std::vector<int64_t> v = {kPlanVersion, device,
                            static_cast<int64_t>(regions.size())};
  for (const PlanRegion& r : regions)
    v.insert(v.end(), {r.leader, r.delta, r.size});
  v.push_back(static_cast<int64_t>(fresh.size()));
  v.insert(v.end(), fresh.begin(), fresh.end());
  v.push_back(static_cast<int64_t>(outputs.size()));
  for (const PlanOutput& o : outputs) {
    v.push_back(o.kind);
    if (o.kind == PlanOutput::kNone)
      continue;
    v.push_back(o.value);
    if (o.kind != PlanOutput::kFresh && o.kind != PlanOutput::kView)
      continue;
    v.push_back(o.dtype);
    v.push_back(static_cast<int64_t>(o.sizes.size()));
    v.insert(v.end(), o.sizes.begin(), o.sizes.end());
    v.insert(v.end(), o.strides.begin(), o.strides.end());
    v.push_back(o.offset);
  }
  return v;
}

GraphPlan parse_plan(const std::vector<int64_t>& ints) {
  Reader r{ints};
  GraphPlan p;
  TORCH_CHECK(r.next() == kPlanVersion, "neuron: compiled graph plan: other version");
  p.device = static_cast<c10::DeviceIndex>(r.count(kMaxDevices - 1));
  for (int64_t n = r.count(kMaxItems); n > 0; n--) {
    PlanRegion g{r.next(), r.next(), r.next()};
    TORCH_CHECK(g.leader >= 0 && g.size > 0, "neuron: compiled graph plan: bad region");
    p.regions.push_back(g);
  }
  for (int64_t n = r.count(kMaxItems); n > 0; n--) {
    p.fresh.push_back(r.next());
    TORCH_CHECK(p.fresh.back() >= 0, "neuron: compiled graph plan: bad storage size");
  }
  for (int64_t n = r.count(kMaxItems); n > 0; n--) {
    PlanOutput o;
    int64_t kind = r.next();
    TORCH_CHECK(kind >= PlanOutput::kNone && kind <= PlanOutput::kView,
                "neuron: compiled graph plan: bad output kind ", kind);
    o.kind = static_cast<PlanOutput::Kind>(kind);
    if (o.kind != PlanOutput::kNone)
      o.value = r.next();
    if (o.kind == PlanOutput::kFresh || o.kind == PlanOutput::kView) {
      o.dtype = r.next();
      TORCH_CHECK(o.dtype >= 0 && o.dtype < static_cast<int64_t>(at::ScalarType::NumOptions),
                  "neuron: compiled graph plan: bad dtype");
      int64_t dim = r.count(64);
      for (int64_t d = 0; d < dim; d++)
        o.sizes.push_back(r.count(INT64_MAX));
      for (int64_t d = 0; d < dim; d++)
        o.strides.push_back(r.count(INT64_MAX));
      o.offset = r.next();
      TORCH_CHECK(o.kind == PlanOutput::kView ||
                  (o.value >= 0 && o.value < static_cast<int64_t>(p.fresh.size()) &&
                   o.offset >= 0),
                  "neuron: compiled graph plan: bad output storage");
      TORCH_CHECK(o.kind == PlanOutput::kFresh || o.value >= 0,
                  "neuron: compiled graph plan: bad output view");
    }
    p.outputs.push_back(std::move(o));
  }
  TORCH_CHECK(r.at == ints.size(), "neuron: compiled graph plan: trailing data");
  return p;
}

GraphPlan make_plan(const c10::List<c10::IValue>& args,
                    const c10::List<c10::IValue>& outputs,
                    std::vector<nrn_graph_arg>* regions) {
  GraphPlan p;
  bool have_device = false;
  auto check_device = [&](const at::Tensor& t, const char* what, size_t i) {
    TORCH_CHECK(t.device().type() == kNeuron, "neuron: compiled graph: ", what, " ", i,
                " is on ", t.device(), " (only neuron tensors can be rebuilt)");
    if (!have_device) {
      p.device = t.device().index();
      have_device = true;
    }
    TORCH_CHECK(t.device().index() == p.device, "neuron: compiled graph: ", what, " ", i,
                " is on ", t.device(), ", others on neuron:", static_cast<int>(p.device));
  };
  // Argument regions: one per storage of the neuron tensor arguments.
  std::vector<Extent> ext;  // union extent of each region
  std::vector<int64_t> region_of(args.size(), -1);
  std::vector<int64_t> leaders = storage_leaders(args);
  for (size_t i = 0; i < args.size(); i++) {
    const c10::IValue& v = args.get(i);
    if (!v.isTensor() || !v.toTensor().defined() || !v.toTensor().device().is_privateuseone())
      continue;
    const at::Tensor& t = v.toTensor();
    check_device(t, "argument", i);
    Extent e = extent(t);
    int64_t leader = leaders[i] == static_cast<int64_t>(i) ? -1 : leaders[i];
    int64_t r = leader < 0 ? -1 : region_of[leader];
    if (leader < 0) {
      // The leader starts its region, even when it is empty.
      r = static_cast<int64_t>(p.regions.size());
      p.regions.push_back({static_cast<int64_t>(i), 0, 0});
      ext.push_back({e.buf, e.lo, e.lo});
    }
    region_of[i] = r;
    if (e.hi == e.lo)
      continue;
    Extent& u = ext[r];
    if (u.hi == u.lo) {
      u = e;
    } else {
      u.lo = std::min(u.lo, e.lo);
      u.hi = std::max(u.hi, e.hi);
    }
  }
  for (size_t r = 0; r < p.regions.size(); r++) {
    const at::Tensor& l = args.get(p.regions[r].leader).toTensor();
    p.regions[r].delta = ext[r].lo - extent(l).lo;
    p.regions[r].size = ext[r].hi - ext[r].lo;
  }
  // Regions of no bytes are no arguments (nothing can touch them).
  std::vector<PlanRegion> kept;
  for (size_t r = 0; r < p.regions.size(); r++) {
    if (!p.regions[r].size)
      continue;
    kept.push_back(p.regions[r]);
    regions->push_back({ext[r].buf, static_cast<uint64_t>(ext[r].lo),
                        static_cast<uint64_t>(ext[r].hi - ext[r].lo), 0});
  }
  p.regions = kept;

  // Outputs.
  std::vector<c10::Storage> fresh;
  for (size_t i = 0; i < outputs.size(); i++) {
    const c10::IValue& v = outputs.get(i);
    PlanOutput o;
    if (v.isNone() || (v.isTensor() && !v.toTensor().defined())) {
      o.kind = PlanOutput::kNone;
    } else if (v.isInt()) {
      o.kind = PlanOutput::kInt;
      o.value = v.toInt();
    } else if (v.isDouble()) {
      o.kind = PlanOutput::kDouble;
      o.value = double_bits(v.toDouble());
    } else if (v.isBool()) {
      o.kind = PlanOutput::kBool;
      o.value = v.toBool();
    } else if (v.isTensor()) {
      const at::Tensor& t = v.toTensor();
      check_device(t, "output", i);
      TORCH_CHECK(t.layout() == c10::kStrided && !t.is_conj() && !t.is_neg(),
                  "neuron: compiled graph: output ", i, " is not a plain strided tensor");
      o.dtype = static_cast<int64_t>(t.scalar_type());
      o.sizes = t.sizes().vec();
      o.strides = t.strides().vec();
      int64_t arg = -1;
      for (size_t j = 0; j < args.size() && arg < 0; j++) {
        const c10::IValue& a = args.get(j);
        if (a.isTensor() && a.toTensor().defined() &&
            a.toTensor().storage().is_alias_of(t.storage()))
          arg = static_cast<int64_t>(j);
      }
      if (arg >= 0) {
        const at::Tensor& a = args.get(arg).toTensor();
        TORCH_CHECK(a.device() == t.device(), "neuron: compiled graph: output ", i,
                    " views an argument on another device");
        o.kind = PlanOutput::kView;
        o.value = arg;
        o.offset = t.storage_offset() * static_cast<int64_t>(t.itemsize()) -
                   a.storage_offset() * static_cast<int64_t>(a.itemsize());
      } else {
        size_t j = 0;
        while (j < fresh.size() && !fresh[j].is_alias_of(t.storage()))
          j++;
        if (j == fresh.size()) {
          fresh.push_back(t.storage());
          p.fresh.push_back(static_cast<int64_t>(t.storage().nbytes()));
        }
        o.kind = PlanOutput::kFresh;
        o.value = static_cast<int64_t>(j);
        o.offset = t.storage_offset();
      }
    } else {
      TORCH_CHECK(false, "neuron: compiled graph: output ", i, " is a ", v.tagKind(),
                  " (tensors, ints, floats, bools and None can be rebuilt)");
    }
    p.outputs.push_back(std::move(o));
  }
  for (const c10::Storage& st : fresh) {
    if (!st.nbytes())
      continue;
    DeviceSpan sp = storage_span(st);
    // Bound to a new storage at each launch: the graph must write it whole.
    regions->push_back({sp.buf, sp.offset, st.nbytes(), NRN_GRAPH_ARG_FRESH});
  }
  return p;
}

c10::List<c10::IValue> launch_plan(const GraphPlan& plan, const nrn_graph* g,
                                   uint64_t arena_size,
                                   const c10::List<c10::IValue>& args) {
  std::vector<nrn_graph_arg> bind;
  bind.reserve(plan.nargs());
  for (const PlanRegion& r : plan.regions) {
    TORCH_CHECK(r.leader < static_cast<int64_t>(args.size()) && args.get(r.leader).isTensor(),
                "neuron: compiled graph: the plan names argument ", r.leader,
                ", which is no tensor");
    const at::Tensor& l = args.get(r.leader).toTensor();
    Extent e = extent(l);
    bind.push_back({e.buf, static_cast<uint64_t>(e.lo + r.delta),
                    static_cast<uint64_t>(r.size), 0});
  }
  std::vector<c10::Storage> fresh;
  fresh.reserve(plan.fresh.size());
  for (int64_t nbytes : plan.fresh) {
    fresh.push_back(new_storage(plan.device, nbytes));
    if (nbytes) {
      DeviceSpan sp = storage_span(fresh.back());
      bind.push_back({sp.buf, sp.offset, static_cast<uint64_t>(nbytes), 0});
    }
  }
  {
    // The arena goes back to the allocator when this scope ends: its blocks
    // are reused by later work on the same stream only (after this launch).
    c10::Storage arena;
    DeviceSpan asp{nullptr, 0};
    if (arena_size) {
      arena = new_storage(plan.device, static_cast<int64_t>(arena_size));
      asp = storage_span(arena);
    }
    NEURON_CHECK(nrn_graph_launch(device_stream(plan.device), g, bind.data(), asp.buf,
                                  asp.offset));
  }
  c10::List<c10::IValue> out(c10::AnyType::get());
  out.reserve(plan.outputs.size());
  for (const PlanOutput& o : plan.outputs) {
    switch (o.kind) {
    case PlanOutput::kNone:
      out.push_back(c10::IValue());
      break;
    case PlanOutput::kInt:
      out.push_back(o.value);
      break;
    case PlanOutput::kDouble: {
      double d;
      std::memcpy(&d, &o.value, sizeof d);
      out.push_back(d);
      break;
    }
    case PlanOutput::kBool:
      out.push_back(o.value != 0);
      break;
    case PlanOutput::kFresh:
      out.push_back(tensor_on(fresh[o.value], o, o.offset));
      break;
    case PlanOutput::kView: {
      TORCH_CHECK(o.value < static_cast<int64_t>(args.size()) && args.get(o.value).isTensor(),
                  "neuron: compiled graph: the plan names argument ", o.value,
                  ", which is no tensor");
      const at::Tensor& a = args.get(o.value).toTensor();
      int64_t bytes = a.storage_offset() * static_cast<int64_t>(a.itemsize()) + o.offset;
      int64_t item = static_cast<int64_t>(
          c10::elementSize(static_cast<at::ScalarType>(o.dtype)));
      TORCH_CHECK(bytes >= 0 && bytes % item == 0, "neuron: compiled graph: an output "
                  "views argument ", o.value, " at a byte offset its dtype cannot reach");
      out.push_back(tensor_on(a.storage(), o, bytes / item));
      break;
    }
    }
  }
  return out;
}

}  // namespace torch_neuron
