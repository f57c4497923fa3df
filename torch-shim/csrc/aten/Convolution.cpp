// SPDX-License-Identifier: MIT
// Convolutions on the card (1-d, 2-d and 3-d; stride, padding, dilation,
// groups, bias, transposed with output_padding), forward and backward, as
// PyTorch reaches them for PrivateUse1: convolution_overrideable and
// convolution_backward_overrideable.
//
// im2col with the batch folded into the columns: the window of the
// zero-padded input at each kernel offset k (a strided view: k * dilation +
// o * stride) is copied into a column buffer [C, KK, N, *out], and ONE
// matmul multiplies the weight, as [g, O/g, C/g*KK] (in place), by it as
// [g, C/g*KK, N*L]: a few large products instead of one small one per
// offset and batch entry. The input gradient multiplies the transposed
// weight by the output gradient as [g, O/g, N*L] and adds each offset's
// columns into the window of a zero-padded gradient; the weight gradient
// multiplies that output gradient by the transposed columns. Large batches
// go in chunks whose columns stay within kColumnBudget elements. A
// transposed convolution is the input gradient of the forward one (and its
// backward the forward and weight-gradient paths). Products accumulate in
// float32 (float64 for float64 tensors: acc_dtype()), also for bfloat16
// tensors, rounded once at the end.
#include "NeuronDesc.h"
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
              "neuron: convolution supports float32, float64, bfloat16 and float16, not ",
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

int64_t prod(at::IntArrayRef v) {
  int64_t n = 1;
  for (int64_t e : v)
    n *= e;
  return n;
}

// Batch entries per chunk: a chunk's columns (@per_entry elements per batch
// entry) stay within kColumnBudget elements, whatever the batch size.
constexpr int64_t kColumnBudget = int64_t(4) << 20;

int64_t chunk_of(int64_t n, int64_t per_entry) {
  return std::max<int64_t>(1, std::min<int64_t>(n, kColumnBudget / std::max<int64_t>(per_entry, 1)));
}

// The loops below issue their copies, sums and products themselves, on
// descriptors (NeuronDesc.h) of a few buffers allocated once per call: the
// window at each kernel offset and each offset's columns are computed
// views, not ATen ones (one conv of a 3x3 kernel took ~40 ATen view ops).

// @d [n, ...] without its first @n0 entries of dim 0, @n of them.
nrn_tensor_desc narrow0(nrn_tensor_desc d, int64_t n0, int64_t n) {
  d.offset += static_cast<uint64_t>(n0 * d.strides[0]) * nisa_dtype_size(d.dtype);
  d.shape[0] = n;
  return d;
}

// A contiguous @sizes view of the buffer @base (its first elements).
nrn_tensor_desc contig(const nrn_tensor_desc& base, at::IntArrayRef sizes) {
  return view_desc(base, sizes, row_major(sizes));
}

// The window at kernel offset @k of the (padded) [n, C, *Sp] operand @d,
// for every output position: [n, C, *out], reading d[.., k * dilation +
// o * stride].
nrn_tensor_desc window_desc(const nrn_tensor_desc& d, const std::vector<int64_t>& k,
                            const std::vector<int64_t>& out, const Geometry& g) {
  nrn_tensor_desc w = d;
  int64_t off = 0;
  for (int64_t i = 0; i < g.nsp(); i++) {
    int64_t st = d.strides[2 + i];
    off += k[i] * g.dilation[i] * st;
    w.shape[2 + i] = out[i];
    w.strides[2 + i] = g.stride[i] * st;
  }
  w.offset += static_cast<uint64_t>(off) * nisa_dtype_size(d.dtype);
  return w;
}

// The columns [C, KK, n, *out] @col of kernel offset @f, as [n, C, *out].
nrn_tensor_desc column_desc(const nrn_tensor_desc& col, int64_t f) {
  nrn_tensor_desc c = col;
  c.shape[0] = col.shape[2];
  c.strides[0] = col.strides[2];
  c.shape[1] = col.shape[0];
  c.strides[1] = col.strides[0];
  for (unsigned j = 3; j < col.ndim; j++) {
    c.shape[j - 1] = col.shape[j];
    c.strides[j - 1] = col.strides[j];
  }
  c.ndim = col.ndim - 1;
  c.shape[c.ndim] = 0;
  c.strides[c.ndim] = 0;
  c.offset += static_cast<uint64_t>(f * col.strides[1]) * nisa_dtype_size(col.dtype);
  return c;
}

// The shape of the columns of @n batch entries: [C, KK, n, *out].
std::vector<int64_t> col_shape(int64_t C, int64_t KK, int64_t n, const std::vector<int64_t>& out) {
  std::vector<int64_t> shape{C, KK, n};
  shape.insert(shape.end(), out.begin(), out.end());
  return shape;
}

// Columns of the [n, C, *S] input @x at every kernel offset, into the
// contiguous [C, KK, n, *out] @col: one copy per offset, from @x itself or
// from its zero-padded copy (a fill and a copy into @pad_buf's first
// elements, which must hold n * C * prod(S + 2 * padding)).
void im2col(const Card& card, const nrn_tensor_desc& col, const nrn_tensor_desc& x,
            const nrn_tensor_desc& pad_buf, at::IntArrayRef K,
            const std::vector<int64_t>& out_sp, const Geometry& g) {
  nrn_tensor_desc xp = x;
  bool pad = false;
  for (int64_t p : g.padding)
    pad = pad || p;
  if (pad) {
    std::vector<int64_t> sizes(x.shape, x.shape + x.ndim);
    int64_t inner = 0;
    for (int64_t i = 0; i < g.nsp(); i++)
      sizes[2 + i] += 2 * g.padding[i];
    xp = contig(pad_buf, sizes);
    for (int64_t i = 0; i < g.nsp(); i++)
      inner += g.padding[i] * xp.strides[2 + i];
    card.fill(xp, 0.0);
    card.copy(view_desc(xp, at::IntArrayRef(x.shape, x.ndim),
                        at::IntArrayRef(xp.strides, xp.ndim), inner), x);
  }
  int64_t f = 0;
  for (const auto& k : offsets(K))
    card.copy(column_desc(col, f++), window_desc(xp, k, out_sp, g));
}

// Elements of the padded copy of @n entries of @x [N, C, *S] (0: no padding).
int64_t padded_numel(const at::Tensor& x, int64_t n, const Geometry& g) {
  bool pad = false;
  int64_t e = n * x.size(1);
  for (int64_t i = 0; i < g.nsp(); i++) {
    pad = pad || g.padding[i];
    e *= x.size(2 + i) + 2 * g.padding[i];
  }
  return pad ? e : 0;
}

// A call's temporaries (of several dtypes) in one allocation: add() the
// parts, alloc(), then part(i) is the i-th one's first element, 64-byte
// aligned.
struct Workspace {
  std::vector<std::pair<int64_t, at::ScalarType>> parts;  // byte offset, dtype
  int64_t bytes = 0;
  at::Tensor buf;
  nrn_tensor_desc base{};

  int add(int64_t numel, at::ScalarType dt) {
    parts.emplace_back(bytes, dt);
    bytes += (numel * static_cast<int64_t>(c10::elementSize(dt)) + 63) / 64 * 64;
    return static_cast<int>(parts.size()) - 1;
  }
  void alloc(const at::Device& dev) {
    buf = empty_neuron({std::max<int64_t>(bytes, 1)}, at::kByte, dev);
    base = desc(buf);
  }
  nrn_tensor_desc part(int i) const {
    nrn_tensor_desc d = base;
    d.offset += static_cast<uint64_t>(parts[i].first);
    d.dtype = to_nrn(parts[i].second);
    return d;
  }
};

// Batch entries [@n0, @n0 + @n) of @t [N, Ch, L] (contiguous, descriptor)
// copied into @buf as [Ch, n, L]; returned as [g, Ch/g, n * L] (the batch
// folded into the columns).
nrn_tensor_desc batch_as_columns(const Card& card, const nrn_tensor_desc& t, const nrn_tensor_desc& buf,
                                 int64_t n0, int64_t n, int64_t groups) {
  int64_t ch = t.shape[1], L = t.shape[2];
  card.copy(view_desc(buf, {n, ch, L}, {L, n * L, 1}), narrow0(t, n0, n));
  return contig(buf, {groups, ch / groups, n * L});
}

// Forward: x [N, C, *S], w [O, C/g, *K] -> [N, O, *out]. Per chunk of the
// batch: the columns, one matmul [g, O/g, C/g*KK] @ [g, C/g*KK, n*L] (+ bias)
// in acc_dtype(), and one copy of its [O, n, L] into the output's [n, O, L].
at::Tensor conv_forward(const at::Tensor& x, const at::Tensor& w,
                        const at::Tensor* bias, const Geometry& g) {
  int64_t N = x.size(0), C = x.size(1), O = w.size(0), nsp = g.nsp(), G = g.groups;
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
  Card card(x);
  int64_t L = prod(out_sp), KK = prod(K), og = O / G, cg = C / G;
  at::Tensor wc = w.contiguous();
  nrn_tensor_desc wm = contig(desc(wc), {G, og, cg * KK}), xd = desc(x), od = desc(out);
  int64_t nc = chunk_of(N, C * KK * L);
  Workspace ws;
  int icol = ws.add(C * KK * nc * L, x.scalar_type()), iacc = ws.add(G * og * nc * L,
                                                          acc_dtype(x.scalar_type()));
  int ipad = ws.add(padded_numel(x, nc, g), x.scalar_type());
  ws.alloc(x.device());
  nrn_tensor_desc colb = ws.part(icol), accb = ws.part(iacc), padb = ws.part(ipad), bd{};
  if (bias)
    bd = desc(*bias);
  for (int64_t n0 = 0; n0 < N; n0 += nc) {
    int64_t n = std::min(nc, N - n0);
    nrn_tensor_desc cd = contig(colb, col_shape(C, KK, n, out_sp));
    im2col(card, cd, narrow0(xd, n0, n), padb, K, out_sp, g);
    nrn_tensor_desc bm{};
    if (bias)
      bm = view_desc(bd, {G, og, n * L}, {og * bias->stride(0), bias->stride(0), 0});
    nrn_tensor_desc ad = contig(accb, {G, og, n * L});
    Operand bo(bm);
    card.matmul(ad, wm, contig(colb, {G, cg * KK, n * L}), bias ? &bo : nullptr, false);
    card.copy(view_desc(od, {n, O, L}, {O * L, L, 1}, n0 * O * L),
              view_desc(accb, {n, O, L}, {L, n * L, 1}));
  }
  return out;
}

// Input gradient: go [N, O, *out], w [O, C/g, *K] -> [N, C, *in_sp]; with
// @bias, bias[c] is added to every element (a transposed convolution). Per
// chunk of the batch: one matmul [g, C/g*KK, O/g] @ [g, O/g, n*L] gives the
// columns' gradient, added into the zero-padded gradient one offset at a time.
at::Tensor conv_grad_input(const at::Tensor& go_in, const at::Tensor& w,
                           at::IntArrayRef in_sp, const at::Tensor* bias,
                           const Geometry& g, at::ScalarType dtype) {
  int64_t N = go_in.size(0), C = w.size(1) * g.groups, O = w.size(0), nsp = g.nsp();
  int64_t G = g.groups, og = O / G, cg = C / G;
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
  Card card(go_in);
  at::Tensor go = go_in.contiguous();
  int64_t L = prod(out_sp), KK = prod(K), nc = chunk_of(N, C * KK * L);
  Workspace ws;
  at::ScalarType acc = acc_dtype(dtype);
  int igp = ws.add(prod(padded_shape), acc);
  int icol = ws.add(go.numel() ? C * KK * nc * L : 0, acc);
  int icols = ws.add(go.numel() ? O * nc * L : 0, go.scalar_type());
  ws.alloc(go.device());
  nrn_tensor_desc gpd = contig(ws.part(igp), padded_shape);
  card.fill(gpd, 0.0);
  if (go.numel() > 0) {
    at::Tensor wc = w.contiguous();
    nrn_tensor_desc wt = view_desc(desc(wc), {G, cg * KK, og}, {og * cg * KK, 1, cg * KK});
    nrn_tensor_desc god = view_desc(desc(go), {N, O, L}, {O * L, L, 1});
    nrn_tensor_desc colb = ws.part(icol), colsb = ws.part(icols);
    for (int64_t n0 = 0; n0 < N; n0 += nc) {
      int64_t n = std::min(nc, N - n0);
      nrn_tensor_desc cd = contig(colb, col_shape(C, KK, n, out_sp));
      card.matmul(contig(colb, {G, cg * KK, n * L}), wt,
                  batch_as_columns(card, god, colsb, n0, n, G), nullptr, false);
      nrn_tensor_desc gpn = narrow0(gpd, n0, n);
      int64_t f = 0;
      for (const auto& k : offsets(K)) {
        nrn_tensor_desc win = window_desc(gpn, k, out_sp, g);
        card.bin(NISA_BIN_ADD, win, win, column_desc(cd, f++));
      }
    }
  }
  nrn_tensor_desc inner = gpd;
  int64_t off = 0;
  for (int64_t i = 0; i < nsp; i++) {
    off += g.padding[i] * gpd.strides[2 + i];
    inner.shape[2 + i] = in_sp[i];
  }
  inner.offset += static_cast<uint64_t>(off) * nisa_dtype_size(gpd.dtype);
  if (bias) {
    std::vector<int64_t> bshape(nsp + 2, 1), bstrides(nsp + 2, 0);
    bshape[1] = C;
    bstrides[1] = bias->stride(0);
    card.bin(NISA_BIN_ADD, inner, inner, view_desc(desc(*bias), bshape, bstrides));
  }
  card.copy(gi, inner);
  return gi;
}

// Weight gradient: x [N, C, *S], go [N, O, *out] -> [O, C/g, *K]. Per chunk
// of the batch: [g, O/g, n*L] @ [g, n*L, C/g*KK] (the columns transposed),
// accumulated over the chunks in acc_dtype().
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
  Card card(x);
  at::ScalarType acc = acc_dtype(x.scalar_type());
  bool direct = x.scalar_type() == acc;  // accumulated in gw itself
  int64_t nc = chunk_of(N, C * KK * L), work = N * L != 0 ? 1 : 0;
  at::Tensor go = go_in.contiguous();
  Workspace ws;
  int iacc = ws.add(direct ? 0 : gw.numel(), acc);
  int icol = ws.add(work * C * KK * nc * L, x.scalar_type());
  int icols = ws.add(work * O * nc * L, go.scalar_type());
  int ipad = ws.add(work * padded_numel(x, nc, g), x.scalar_type());
  ws.alloc(x.device());
  nrn_tensor_desc accd = direct ? desc(gw) : contig(ws.part(iacc), wsizes);
  if (N * L == 0) {
    card.fill(accd, 0.0);
  } else {
    nrn_tensor_desc acc_m = contig(accd, {G, og, cg * KK}), xd = desc(x);
    nrn_tensor_desc god = view_desc(desc(go), {N, O, L}, {O * L, L, 1});
    nrn_tensor_desc colb = ws.part(icol), colsb = ws.part(icols), padb = ws.part(ipad);
    for (int64_t n0 = 0; n0 < N; n0 += nc) {
      int64_t n = std::min(nc, N - n0);
      im2col(card, contig(colb, col_shape(C, KK, n, out_sp)), narrow0(xd, n0, n), padb, K,
             out_sp, g);
      nrn_tensor_desc colt = view_desc(colb, {G, n * L, cg * KK},
                                       {cg * KK * n * L, 1, n * L});
      card.matmul(acc_m, batch_as_columns(card, god, colsb, n0, n, G), colt, nullptr, n0 > 0);
    }
  }
  if (!direct)
    card.copy(gw, accd);
  return gw;
}

at::Tensor bias_grad(const at::Tensor& go) {
  std::vector<int64_t> dims{0};
  for (int64_t d = 2; d < go.dim(); d++)
    dims.push_back(d);
  at::ScalarType acc = acc_dtype(go.scalar_type());
  if (go.scalar_type() == acc)
    return go.sum(dims);
  return go.to(acc).sum(dims).to(go.scalar_type());
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

// aten::convolution_backward itself (ConvolutionBackward0 calls it), so
// that its generic kernel -- parameter checks, 1-d convolutions viewed as
// 2-d, a backend choice -- is not run before ours on every step. The bias
// gradient is ours either way (bias_grad).
std::tuple<at::Tensor, at::Tensor, at::Tensor> convolution_backward_direct(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight,
    at::OptionalSymIntArrayRef bias_sizes, c10::SymIntArrayRef stride,
    c10::SymIntArrayRef padding, c10::SymIntArrayRef dilation, bool transposed,
    c10::SymIntArrayRef output_padding, c10::SymInt groups, std::array<bool, 3> mask) {
  return convolution_backward(grad_output, input, weight, stride, padding, dilation,
                              transposed, output_padding, std::move(groups), mask);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("convolution_overrideable", convolution);
  m.impl("convolution_backward_overrideable", convolution_backward);
  m.impl("convolution_backward", convolution_backward_direct);
}

}  // namespace torch_neuron
