// SPDX-License-Identifier: MIT
// Reflection and replication padding (1-d, 2-d, 3-d) on the card, forward
// and backward. Each padded spatial dim is one gather: out[.., o, ..] =
// x[.., src(o), ..] with src the reflected or clamped position of o - lo;
// the table src depends only on the sizes and the padding (never on tensor
// data), so it is built on the host and the gather runs on the card. The
// backward is the transpose: index_add of the gradient at the same
// positions, dim by dim in reverse (float32 accumulation for bfloat16).
// Negative padding crops, as on the CPU. The forms ATen has structured
// take their results (checks, shape, out= rules) from its metas.
#include <ATen/native/Padding.h>
#include <ATen/ops/reflection_pad1d_backward_meta.h>
#include <ATen/ops/reflection_pad1d_meta.h>
#include <ATen/ops/reflection_pad3d_backward_meta.h>
#include <ATen/ops/reflection_pad3d_meta.h>
#include <ATen/ops/replication_pad1d_backward_meta.h>
#include <ATen/ops/replication_pad1d_meta.h>
#include <ATen/ops/replication_pad2d_meta.h>
#include <ATen/ops/replication_pad3d_meta.h>

#include "NeuronMeta.h"
#include "NeuronWindows.h"

namespace torch_neuron {
namespace {

struct PadDims {
  int64_t lead;                 // dims before the padded ones
  std::vector<int64_t> lo, hi;  // per padded dim, first to last
};

template <int N>
PadDims pad_dims(const at::Tensor& x, c10::SymIntArrayRef padding, bool reflect) {
  std::vector<int64_t> p = concrete(padding);
  at::native::padding::check_valid_input<N>(x, p);
  PadDims pd;
  pd.lead = x.dim() - N;
  const char* names = "DHW" + (3 - N);
  for (int i = 0; i < N; i++) {
    int64_t lo = p[2 * (N - 1 - i)], hi = p[2 * (N - 1 - i) + 1];
    int64_t in = x.size(pd.lead + i);
    if (reflect)
      TORCH_CHECK(lo < in && hi < in, "Argument #4: Padding size should be less than the "
                  "corresponding input dimension, but got: padding (", lo, ", ", hi,
                  ") at dimension ", pd.lead + i, " of input ", x.sizes());
    TORCH_CHECK(in + lo + hi >= 1, "input (", names[i], ": ", in, ") is too small. "
                "Calculated output ", names[i], ": ", in + lo + hi);
    pd.lo.push_back(lo);
    pd.hi.push_back(hi);
  }
  return pd;
}

// Source positions of the @in + lo + hi outputs of one dim.
std::vector<int64_t> pad_index(int64_t in, int64_t lo, int64_t hi, bool reflect) {
  std::vector<int64_t> idx(in + lo + hi);
  for (int64_t o = 0; o < in + lo + hi; o++) {
    int64_t j = o - lo;
    if (reflect)
      j = j < 0 ? -j : (j >= in ? 2 * (in - 1) - j : j);
    else
      j = std::clamp<int64_t>(j, 0, in - 1);
    idx[o] = j;
  }
  return idx;
}

template <int N, bool Reflect>
at::Tensor pad_fw(const at::Tensor& self, c10::SymIntArrayRef padding) {
  TORCH_CHECK(is_neuron(self), "neuron: ", Reflect ? "reflection" : "replication", "_pad",
              N, "d: expected a neuron tensor");
  PadDims pd = pad_dims<N>(self, padding, Reflect);
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end());
  for (int i = 0; i < N; i++)
    shape[pd.lead + i] += pd.lo[i] + pd.hi[i];
  if (self.numel() == 0)
    return empty_neuron(shape, self.scalar_type(), self.device());
  at::Tensor y = self;
  for (int i = N - 1; i >= 0; i--) {
    int64_t d = pd.lead + i;
    y = select_along(y, d, shape_index(pad_index(self.size(d), pd.lo[i], pd.hi[i], Reflect),
                                       self.device()));
  }
  return y;
}

// The structured metas of each padding, forward and backward (void: none
// in ATen 2.6, the checks above are the CPU's).
template <int N, bool Reflect>
struct PadMeta {
  using Fw = void;
  using Bw = void;
};
#define NEURON_PAD_META(n, reflect, fw, bw) \
  template <>                               \
  struct PadMeta<n, reflect> {              \
    using Fw = at::meta::structured_##fw;   \
    using Bw = bw;                          \
  };
NEURON_PAD_META(1, true, reflection_pad1d, at::meta::structured_reflection_pad1d_backward)
NEURON_PAD_META(3, true, reflection_pad3d, at::meta::structured_reflection_pad3d_backward)
NEURON_PAD_META(1, false, replication_pad1d, at::meta::structured_replication_pad1d_backward)
NEURON_PAD_META(2, false, replication_pad2d, void)
NEURON_PAD_META(3, false, replication_pad3d, void)
#undef NEURON_PAD_META

// @compute (a new tensor) in @form: into the results of @Meta on @args, or
// without a meta, the value itself or copied into out= @given.
template <class Meta, class F, class... Args>
at::Tensor pad_result(Form form, const at::Tensor& given, F compute, const Args&... args) {
  if constexpr (std::is_void_v<Meta>) {
    at::Tensor r = compute();
    if (form == Form::Functional)
      return r;
    TORCH_CHECK(given.scalar_type() == r.scalar_type(), "expected scalar type ",
                r.scalar_type(), " but found ", given.scalar_type());  // as the CPU's
    at::Tensor out = given;
    return into(out, r);
  } else {
    return computed_results<Meta, 1>(form, {given}, [&](const auto&...) { return compute(); },
                                     args...)[0];
  }
}

// ATen's metas take an input of more than N + 2 dims as unbatched and
// shape its result wrongly (F.pad refuses it): refused.
template <int N>
void check_rank(const at::Tensor& self) {
  TORCH_CHECK(self.dim() <= N + 2, "neuron: ", N, "-d padding: expected a ", N + 1, "-d or ",
              N + 2, "-d (batch mode) input, but got one of sizes ", self.sizes());
}

template <int N, bool Reflect>
at::Tensor pad_fw_form(const at::Tensor& self, c10::SymIntArrayRef padding, Form form,
                       const at::Tensor& given) {
  check_rank<N>(self);
  std::vector<int64_t> p = concrete(padding);
  return pad_result<typename PadMeta<N, Reflect>::Fw>(
      form, given, [&] { return pad_fw<N, Reflect>(self, padding); }, self,
      at::IntArrayRef(p));
}

template <int N, bool Reflect>
at::Tensor pad_fw_meta(const at::Tensor& self, c10::SymIntArrayRef padding) {
  return pad_fw_form<N, Reflect>(self, padding, Form::Functional, {});
}

template <int N, bool Reflect>
at::Tensor& pad_fw_out(const at::Tensor& self, c10::SymIntArrayRef padding, at::Tensor& out) {
  pad_fw_form<N, Reflect>(self, padding, Form::Out, out);
  return out;
}

template <int N, bool Reflect>
at::Tensor pad_bw(const at::Tensor& grad, const at::Tensor& self, c10::SymIntArrayRef padding) {
  const char* op = Reflect ? "reflection_pad_backward" : "replication_pad_backward";
  check_float_input(grad, op);
  check_device(grad, self);
  PadDims pd = pad_dims<N>(self, padding, Reflect);
  for (int i = 0; i < N; i++) {
    int64_t d = pd.lead + i;
    TORCH_CHECK(grad.dim() == self.dim() &&
                grad.size(d) == self.size(d) + pd.lo[i] + pd.hi[i],
                "neuron: ", op, ": grad_output ", grad.sizes(), " does not match the "
                "padded input ", self.sizes());
  }
  if (self.numel() == 0)
    return at::zeros(self.sizes(), grad.options());
  at::Tensor g = grad.to(acc_dtype(grad.scalar_type()));
  for (int i = 0; i < N; i++) {
    int64_t d = pd.lead + i, in = self.size(d);
    std::vector<int64_t> shape(g.sizes().begin(), g.sizes().end());
    shape[d] = in;
    at::Tensor gx = at::zeros(shape, g.options());
    add_along(gx, d, shape_index(pad_index(in, pd.lo[i], pd.hi[i], Reflect), g.device()), g);
    g = gx;
  }
  return g.to(grad.scalar_type());
}

template <int N, bool Reflect>
at::Tensor pad_bw_form(const at::Tensor& grad, const at::Tensor& self,
                       c10::SymIntArrayRef padding, Form form, const at::Tensor& given) {
  check_rank<N>(self);
  std::vector<int64_t> p = concrete(padding);
  return pad_result<typename PadMeta<N, Reflect>::Bw>(
      form, given, [&] { return pad_bw<N, Reflect>(grad, self, padding); }, grad, self,
      at::IntArrayRef(p));
}

template <int N, bool Reflect>
at::Tensor pad_bw_meta(const at::Tensor& grad, const at::Tensor& self,
                       c10::SymIntArrayRef padding) {
  return pad_bw_form<N, Reflect>(grad, self, padding, Form::Functional, {});
}

template <int N, bool Reflect>
at::Tensor& pad_bw_out(const at::Tensor& grad, const at::Tensor& self,
                       c10::SymIntArrayRef padding, at::Tensor& gi) {
  pad_bw_form<N, Reflect>(grad, self, padding, Form::Out, gi);
  return gi;
}

}  // namespace

#define NEURON_PAD(name, n, reflect)                                \
  m.impl(name, pad_fw_meta<n, reflect>);                            \
  m.impl(name ".out", pad_fw_out<n, reflect>);                      \
  m.impl(name "_backward", pad_bw_meta<n, reflect>);                \
  m.impl(name "_backward.grad_input", pad_bw_out<n, reflect>);

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  NEURON_PAD("reflection_pad1d", 1, true)
  NEURON_PAD("reflection_pad2d", 2, true)
  NEURON_PAD("reflection_pad3d", 3, true)
  NEURON_PAD("replication_pad1d", 1, false)
  NEURON_PAD("replication_pad2d", 2, false)
  NEURON_PAD("replication_pad3d", 3, false)
}

}  // namespace torch_neuron
