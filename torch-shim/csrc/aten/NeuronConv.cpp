// SPDX-License-Identifier: MIT
// Convolutions on the card (1-d, 2-d and 3-d; stride, padding, dilation,
// groups, bias, transposed with output_padding), forward and backward, as
// PyTorch reaches them for PrivateUse1: convolution_overrideable and
// convolution_backward_overrideable.
//
// One kernel offset k at a time: the window of the zero-padded input at k
// (a strided view: k * dilation + o * stride) is copied into a contiguous
// column buffer [N, C, *out] and multiplied, as [N, g, C/g, L], by the
// weight's slice at k, [g, O/g, C/g] (a strided view too), accumulating into
// the output [N, g, O/g, L]. The input gradient runs the same loop the other
// way (weight slice transposed, the product added into the window of a
// zero-padded gradient), the weight gradient multiplies the output gradient
// by the columns with the batch folded into the inner dimension. A
// transposed convolution is the input gradient of the forward one (and its
// backward the forward and weight-gradient paths). Products accumulate in
// float32, also for bfloat16 tensors, rounded once at the end.
#include "NeuronWindows.h"

namespace torch_neuron {
namespace {

struct Geometry {
  std::vector<int64_t> stride, padding, dilation;
  int64_t groups;
  int64_t nsp() const { return static_cast<int64_t>(stride.size()); }
};

std::vector<int64_t> ints(c10::SymIntArrayRef v) {
  std::vector<int64_t> out;
  for (const c10::SymInt& s : v)
    out.push_back(s.expect_int());
  return out;
}

// The sizes a list argument must have (one per spatial dim; one value repeats).
std::vector<int64_t> per_dim(std::vector<int64_t> v, int64_t nsp, const char* what,
                             int64_t dflt) {
  if (v.empty())
    v.assign(nsp, dflt);
  if (v.size() == 1)
    v.assign(nsp, v[0]);
  TORCH_CHECK(static_cast<int64_t>(v.size()) == nsp, "neuron: convolution: ", what,
              " has ", v.size(), " values for ", nsp, " spatial dimensions");
  return v;
}

Geometry geometry(const at::Tensor& input, const at::Tensor& weight,
                  c10::SymIntArrayRef stride, c10::SymIntArrayRef padding,
                  c10::SymIntArrayRef dilation, c10::SymInt groups) {
  TORCH_CHECK(input.dim() >= 3 && input.dim() <= 5, "neuron: convolution of a ",
              input.dim(), "-d input is not supported (1-d, 2-d and 3-d "
              "convolutions take [N, C, *spatial] inputs of 3 to 5 dims)");
  TORCH_CHECK(weight.dim() == input.dim(), "neuron: convolution: weight of ",
              weight.dim(), " dims for an input of ", input.dim());
  TORCH_CHECK(card_float(input.scalar_type()),
              "neuron: convolution supports float32, bfloat16 and float16, not ",
              input.scalar_type());
  TORCH_CHECK(weight.scalar_type() == input.scalar_type(), "neuron: convolution: "
              "input (", input.scalar_type(), ") and weight (", weight.scalar_type(),
              ") must have the same dtype");
  check_device(input, weight);
  Geometry g;
  int64_t nsp = input.dim() - 2;
  g.stride = per_dim(ints(stride), nsp, "stride", 1);
  g.padding = per_dim(ints(padding), nsp, "padding", 0);
  g.dilation = per_dim(ints(dilation), nsp, "dilation", 1);
  g.groups = groups.expect_int();
  TORCH_CHECK(g.groups > 0, "neuron: convolution: groups must be positive");
  for (int64_t i = 0; i < nsp; i++)
    TORCH_CHECK(g.stride[i] > 0 && g.padding[i] >= 0 && g.dilation[i] > 0,
                "neuron: convolution: stride and dilation must be positive and "
                "padding non-negative");
  return g;
}

at::IntArrayRef kernel_of(const at::Tensor& weight) {
  return weight.sizes().slice(2);
}

// Output extent of a forward convolution of @in positions.
int64_t conv_out(int64_t in, int64_t k, const Geometry& g, int64_t i) {
  return (in + 2 * g.padding[i] - g.dilation[i] * (k - 1) - 1) / g.stride[i] + 1;
}

at::ScalarType acc_type() { return at::kFloat; }

int64_t prod(at::IntArrayRef v) {
  int64_t n = 1;
  for (int64_t e : v)
    n *= e;
  return n;
}

// The weight's slice at kernel offset @k as [g, O/g, C/g].
at::Tensor weight_slice(const at::Tensor& w, const std::vector<int64_t>& k, int64_t groups) {
  int64_t og = w.size(0) / groups, off = 0;
  for (size_t i = 0; i < k.size(); i++)
    off += k[i] * w.stride(2 + i);
  return strided(w, {groups, og, w.size(1)}, {og * w.stride(0), w.stride(0), w.stride(1)},
                 off);
}

// @t [N, Ch, *sp] contiguous, seen as [N, g, Ch/g, L].
at::Tensor grouped(const at::Tensor& t, int64_t groups) {
  int64_t L = prod(t.sizes().slice(2));
  return t.view({t.size(0), groups, t.size(1) / groups, L});
}

// The input with its zero padding (itself, any strides, when there is none).
at::Tensor padded_input(const at::Tensor& x, const Geometry& g) {
  for (int64_t p : g.padding)
    if (p)
      return padded(x, g.padding, g.padding, 0.0, x.scalar_type());
  return x;
}

// Forward: x [N, C, *S], w [O, C/g, *K] -> [N, O, *out].
at::Tensor conv_forward(const at::Tensor& x, const at::Tensor& w,
                        const at::Tensor* bias, const Geometry& g) {
  int64_t N = x.size(0), C = x.size(1), O = w.size(0), nsp = g.nsp();
  at::IntArrayRef K = kernel_of(w);
  TORCH_CHECK(C == w.size(1) * g.groups, "Given groups=", g.groups, ", weight of size ",
              w.sizes(), ", expected input", x.sizes(), " to have ", w.size(1) * g.groups,
              " channels, but got ", C, " channels instead");
  TORCH_CHECK(O % g.groups == 0, "Given groups=", g.groups, ", expected weight to be "
              "divisible by ", g.groups, " at dimension 0, but got weight of size ",
              w.sizes(), " instead");
  std::vector<int64_t> out_sp, out_shape{N, O};
  for (int64_t i = 0; i < nsp; i++) {
    int64_t o = conv_out(x.size(2 + i), K[i], g, i);
    TORCH_CHECK(o > 0 && x.size(2 + i) + 2 * g.padding[i] >= g.dilation[i] * (K[i] - 1) + 1,
                "Calculated padded input size per channel: (", x.sizes().slice(2),
                "). Kernel size: (", K, "). Kernel size can't be greater than actual "
                "input size");
    out_sp.push_back(o);
    out_shape.push_back(o);
  }
  at::Tensor out = empty_neuron(out_shape, x.scalar_type(), x.device());
  if (out.numel() == 0)
    return out;
  at::Tensor acc = x.scalar_type() == acc_type() ? out
                                                  : empty_neuron(out_shape, acc_type(), x.device());
  at::Tensor xp = padded_input(x, g);
  std::vector<int64_t> col_shape{N, C};
  col_shape.insert(col_shape.end(), out_sp.begin(), out_sp.end());
  at::Tensor col = empty_neuron(col_shape, x.scalar_type(), x.device());
  at::Tensor col_g = grouped(col, g.groups), acc_g = grouped(acc, g.groups);
  at::Tensor bias_g;
  if (bias)
    bias_g = strided(*bias, {g.groups, O / g.groups, 1},
                     {O / g.groups * bias->stride(0), bias->stride(0), 0});
  bool first = true;
  for (const auto& k : offsets(K)) {
    copy_into(col, window(xp, k, out_sp, g.stride, g.dilation));
    matmul_acc(acc_g, weight_slice(w, k, g.groups), col_g,
               first && bias ? &bias_g : nullptr, !first);
    first = false;
  }
  if (!acc.is_same(out))
    copy_into(out, acc);
  return out;
}

// Input gradient: go [N, O, *out], w [O, C/g, *K] -> [N, C, *in_sp]; with
// @bias, bias[c] is added to every element (a transposed convolution).
at::Tensor conv_grad_input(const at::Tensor& go_in, const at::Tensor& w,
                           at::IntArrayRef in_sp, const at::Tensor* bias,
                           const Geometry& g, at::ScalarType dtype) {
  int64_t N = go_in.size(0), C = w.size(1) * g.groups, nsp = g.nsp();
  at::IntArrayRef K = kernel_of(w);
  std::vector<int64_t> out_sp(go_in.sizes().begin() + 2, go_in.sizes().end());
  std::vector<int64_t> shape{N, C}, padded_shape{N, C};
  for (int64_t i = 0; i < nsp; i++) {
    shape.push_back(in_sp[i]);
    padded_shape.push_back(in_sp[i] + 2 * g.padding[i]);
  }
  at::Tensor gi = empty_neuron(shape, dtype, go_in.device());
  if (gi.numel() == 0)
    return gi;
  at::Tensor go = go_in.contiguous();
  at::Tensor gp = at::zeros(padded_shape, go.options().dtype(acc_type()));
  std::vector<int64_t> col_shape{N, C};
  col_shape.insert(col_shape.end(), out_sp.begin(), out_sp.end());
  at::Tensor col = empty_neuron(col_shape, acc_type(), go.device());
  at::Tensor col_g = grouped(col, g.groups), go_g = grouped(go, g.groups);
  if (go.numel() > 0) {
    for (const auto& k : offsets(K)) {
      matmul_acc(col_g, weight_slice(w, k, g.groups).transpose(1, 2), go_g, nullptr, false);
      at::Tensor win = window(gp, k, out_sp, g.stride, g.dilation);
      add_into(win, win, col);
    }
  }
  at::Tensor inner = gp;
  for (int64_t i = 0; i < nsp; i++)
    inner = inner.narrow(2 + i, g.padding[i], in_sp[i]);
  if (bias) {
    std::vector<int64_t> bshape(nsp + 1, 1);
    bshape[0] = C;
    add_into(inner, inner, bias->view(bshape));
  }
  copy_into(gi, inner);
  return gi;
}

// Weight gradient: x [N, C, *S], go [N, O, *out] -> [O, C/g, *K].
at::Tensor conv_grad_weight(const at::Tensor& x, const at::Tensor& go_in,
                            at::IntArrayRef wsizes, const Geometry& g) {
  int64_t N = x.size(0), C = x.size(1), O = wsizes[0], G = g.groups;
  int64_t og = O / G, cg = C / G;
  at::IntArrayRef K = wsizes.slice(2);
  std::vector<int64_t> out_sp(go_in.sizes().begin() + 2, go_in.sizes().end());
  int64_t L = prod(out_sp), KK = prod(K);
  at::Tensor gw = empty_neuron(wsizes, x.scalar_type(), x.device());
  if (gw.numel() == 0)
    return gw;
  at::Tensor acc = x.scalar_type() == acc_type() ? gw
                                                  : empty_neuron(wsizes, acc_type(), x.device());
  if (N * L == 0) {
    acc.zero_();
  } else {
    // The output gradient as [g, O/g, N * L] and the columns as [C, N, *out].
    at::Tensor go_t = empty_neuron({G, og, N, L}, go_in.scalar_type(), x.device());
    copy_into(go_t, grouped(go_in.contiguous(), G).permute({1, 2, 0, 3}));
    at::Tensor go_m = go_t.view({G, og, N * L});
    std::vector<int64_t> cshape{C, N};
    cshape.insert(cshape.end(), out_sp.begin(), out_sp.end());
    at::Tensor colT = empty_neuron(cshape, x.scalar_type(), x.device());
    at::Tensor col_nc = colT.transpose(0, 1);  // [N, C, *out]
    at::Tensor col_m = colT.view({G, cg, N * L}).transpose(1, 2);  // [g, N*L, C/g]
    at::Tensor xp = padded_input(x, g);
    int64_t flat = 0;
    for (const auto& k : offsets(K)) {
      copy_into(col_nc, window(xp, k, out_sp, g.stride, g.dilation));
      at::Tensor slice = strided(acc, {G, og, cg}, {og * cg * KK, cg * KK, KK}, flat++);
      matmul_acc(slice, go_m, col_m, nullptr, false);
    }
  }
  if (!acc.is_same(gw))
    copy_into(gw, acc);
  return gw;
}

at::Tensor bias_grad(const at::Tensor& go) {
  std::vector<int64_t> dims{0};
  for (int64_t d = 2; d < go.dim(); d++)
    dims.push_back(d);
  if (go.scalar_type() == acc_type())
    return go.sum(dims);
  return go.to(acc_type()).sum(dims).to(go.scalar_type());
}

// A transposed convolution's output extents.
std::vector<int64_t> transposed_out(const at::Tensor& x, at::IntArrayRef K,
                                    const std::vector<int64_t>& out_pad, const Geometry& g) {
  std::vector<int64_t> sp;
  for (int64_t i = 0; i < g.nsp(); i++) {
    TORCH_CHECK(out_pad[i] >= 0 && (out_pad[i] < g.stride[i] || out_pad[i] < g.dilation[i]),
                "output padding must be smaller than either stride or dilation, but "
                "got output_padding=", out_pad[i], ", stride=", g.stride[i],
                ", dilation=", g.dilation[i]);
    int64_t o = (x.size(2 + i) - 1) * g.stride[i] - 2 * g.padding[i] +
                g.dilation[i] * (K[i] - 1) + out_pad[i] + 1;
    TORCH_CHECK(o > 0, "neuron: conv_transpose: the output size ", o, " of spatial dim ",
                i, " is not positive");
    sp.push_back(o);
  }
  return sp;
}

at::Tensor convolution(const at::Tensor& input, const at::Tensor& weight,
                       const std::optional<at::Tensor>& bias, c10::SymIntArrayRef stride,
                       c10::SymIntArrayRef padding, c10::SymIntArrayRef dilation,
                       bool transposed, c10::SymIntArrayRef output_padding,
                       c10::SymInt groups) {
  Geometry g = geometry(input, weight, stride, padding, dilation, groups);
  const at::Tensor* b = bias && bias->defined() ? &*bias : nullptr;
  if (b) {
    check_device(input, *b);
    TORCH_CHECK(b->dim() == 1, "neuron: convolution: bias must be 1-d");
  }
  if (!transposed) {
    TORCH_CHECK(!b || b->size(0) == weight.size(0), "Given weight of size ",
                weight.sizes(), ", expected bias to be 1-dimensional with ",
                weight.size(0), " elements, but got bias of size ", b->sizes());
    return conv_forward(input, weight, b, g);
  }
  TORCH_CHECK(input.size(1) == weight.size(0), "Given transposed=1, weight of size ",
              weight.sizes(), ", expected input", input.sizes(), " to have ",
              weight.size(0), " channels, but got ", input.size(1), " channels instead");
  TORCH_CHECK(weight.size(0) % g.groups == 0, "neuron: conv_transpose: ",
              weight.size(0), " input channels are not divisible by groups=", g.groups);
  TORCH_CHECK(!b || b->size(0) == weight.size(1) * g.groups, "Given transposed=1, weight "
              "of size ", weight.sizes(), ", expected bias to be 1-dimensional with ",
              weight.size(1) * g.groups, " elements, but got bias of size ", b->sizes());
  std::vector<int64_t> op = per_dim(ints(output_padding), g.nsp(), "output_padding", 0);
  std::vector<int64_t> sp = transposed_out(input, kernel_of(weight), op, g);
  return conv_grad_input(input, weight, sp, b, g, input.scalar_type());
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> convolution_backward(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight,
    c10::SymIntArrayRef stride, c10::SymIntArrayRef padding,
    c10::SymIntArrayRef dilation, bool transposed, c10::SymIntArrayRef output_padding,
    c10::SymInt groups, std::array<bool, 3> mask) {
  Geometry g = geometry(input, weight, stride, padding, dilation, groups);
  check_device(input, grad_output);
  TORCH_CHECK(grad_output.dim() == input.dim(), "neuron: convolution_backward: "
              "grad_output of ", grad_output.dim(), " dims for an input of ", input.dim());
  at::Tensor go = grad_output.scalar_type() == input.scalar_type()
                      ? grad_output : grad_output.to(input.scalar_type());
  at::Tensor gi, gw, gb;
  if (!transposed) {
    if (mask[0])
      gi = conv_grad_input(go, weight, input.sizes().slice(2), nullptr, g,
                           input.scalar_type());
    if (mask[1])
      gw = conv_grad_weight(input, go, weight.sizes(), g);
  } else {
    // y = conv_grad_input(x): dx = conv(dy), dw = conv_grad_weight(dy, x).
    if (mask[0])
      gi = conv_forward(go, weight, nullptr, g);
    if (mask[1])
      gw = conv_grad_weight(go, input, weight.sizes(), g);
  }
  if (mask[2])
    gb = bias_grad(go);
  return {gi, gw, gb};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("convolution_overrideable", convolution);
  m.impl("convolution_backward_overrideable", convolution_backward);
}

}  // namespace torch_neuron
