// SPDX-License-Identifier: MIT
// The discrete Fourier transforms ATen's torch.fft and torch.stft are made
// of: _fft_r2c, _fft_c2r and _fft_c2c, one FFT instruction of the card per
// transformed dim (docs/hardware.md, "FFT"), the normalisation its @scalar.
#include <cmath>

#include "NeuronOps.h"

namespace torch_neuron {
namespace {

// ATen's normalisation modes (fft_norm_mode).
enum Norm : int64_t { kNone = 0, kByRootN = 1, kByN = 2 };

// The factor of @normalization for transforms of lengths @sizes.
double norm_scale(int64_t normalization, const std::vector<int64_t>& sizes) {
  double n = 1.0;
  for (int64_t s : sizes)
    n *= static_cast<double>(s);
  switch (normalization) {
    case kNone: return 1.0;
    case kByRootN: return 1.0 / std::sqrt(n);
    case kByN: return 1.0 / n;
  }
  TORCH_CHECK(false, "neuron: unknown FFT normalization mode ", normalization);
}

std::vector<int64_t> wrap_dims(const at::Tensor& t, at::IntArrayRef dim) {
  std::vector<int64_t> r;
  for (int64_t d : dim)
    r.push_back(at::maybe_wrap_dim(d, t.dim()));
  return r;
}

// One transform along @d of @src into @dst (fresh). The card's operands
// have at most NISA_MAX_DIMS dims: more are the axis and the rest flattened.
void fft_axis(nisa_fft op, const at::Tensor& dst, const at::Tensor& src, int64_t d,
              double scale) {
  if (src.dim() <= NISA_MAX_DIMS) {
    nrn_tensor_desc o = desc(dst), i = desc(src);
    NEURON_OP(nrn_op_fft(stream_for(dst), op, &o, &i, static_cast<int>(d), scale));
    return;
  }
  at::Tensor s = src.movedim(d, -1);
  s = s.reshape({-1, s.size(-1)});
  at::Tensor o = dst.movedim(d, -1);
  at::Tensor flat = empty_neuron({s.size(0), o.size(-1)}, dst.scalar_type(), dst.device());
  fft_axis(op, flat, s, 1, scale);
  o.copy_(flat.view(o.sizes()));
}

// Complex-to-complex along each of @dims in turn, from @src; @scale once.
at::Tensor c2c_dims(const at::Tensor& src, const std::vector<int64_t>& dims,
                    bool forward, double scale) {
  at::Tensor cur = src;
  for (size_t i = 0; i < dims.size(); i++) {
    at::Tensor next = empty_neuron(src.sizes(), at::kComplexFloat, src.device());
    fft_axis(forward ? NISA_FFT_FORWARD : NISA_FFT_BACKWARD, next, cur, dims[i],
             i == 0 ? scale : 1.0);
    cur = next;
  }
  return cur;
}

void check_input(const at::Tensor& self, bool complex, const char* name) {
  at::ScalarType want = complex ? at::kComplexFloat : at::kFloat;
  TORCH_CHECK(self.scalar_type() == want, "neuron: ", name, ": the card's FFT "
              "transforms ", complex ? "complex64" : "float32", " (got ",
              self.scalar_type(), "; the card holds no complex128)");
}

at::Tensor fft_c2c(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization,
                   bool forward) {
  check_input(self, true, "_fft_c2c");
  std::vector<int64_t> dims = wrap_dims(self, dim), sizes;
  if (dims.empty())
    return self.clone();
  for (int64_t d : dims)
    sizes.push_back(self.size(d));
  return c2c_dims(self, dims, forward, norm_scale(normalization, sizes));
}

// Real to complex: R2C along the last of @dim (one-sided or both halves),
// then forward complex transforms along the others.
at::Tensor fft_r2c(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization,
                   bool onesided) {
  check_input(self, false, "_fft_r2c");
  std::vector<int64_t> dims = wrap_dims(self, dim), sizes;
  TORCH_CHECK(!dims.empty(), "neuron: _fft_r2c: no dimension to transform");
  for (int64_t d : dims)
    sizes.push_back(self.size(d));
  int64_t last = dims.back(), n = self.size(last);
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end());
  shape[last] = onesided ? n / 2 + 1 : n;
  at::Tensor r = empty_neuron(shape, at::kComplexFloat, self.device());
  fft_axis(NISA_FFT_R2C, r, self, last, norm_scale(normalization, sizes));
  dims.pop_back();
  return dims.empty() ? r : c2c_dims(r, dims, true, 1.0);
}

// Complex to real: backward complex transforms along all of @dim but the
// last, then C2R along the last into @last_dim_size reals.
at::Tensor fft_c2r(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization,
                   int64_t last_dim_size) {
  check_input(self, true, "_fft_c2r");
  std::vector<int64_t> dims = wrap_dims(self, dim), sizes;
  TORCH_CHECK(!dims.empty(), "neuron: _fft_c2r: no dimension to transform");
  TORCH_CHECK(last_dim_size >= 1, "Invalid number of data points (", last_dim_size,
              ") specified");
  int64_t last = dims.back();
  for (int64_t d : dims)
    sizes.push_back(d == last ? last_dim_size : self.size(d));
  TORCH_CHECK(self.size(last) >= last_dim_size / 2 + 1, "neuron: _fft_c2r: ",
              last_dim_size, " points need ", last_dim_size / 2 + 1,
              " complex inputs along dim ", last, ", got ", self.size(last));
  dims.pop_back();
  at::Tensor c = dims.empty() ? self : c2c_dims(self, dims, false, 1.0);
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end());
  shape[last] = last_dim_size;
  at::Tensor r = empty_neuron(shape, at::kFloat, self.device());
  fft_axis(NISA_FFT_C2R, r, c, last, norm_scale(normalization, sizes));
  return r;
}

at::Tensor& fft_c2c_out(const at::Tensor& self, at::IntArrayRef dim,
                        int64_t normalization, bool forward, at::Tensor& out) {
  return into(out, fft_c2c(self, dim, normalization, forward));
}

at::Tensor& fft_r2c_out(const at::Tensor& self, at::IntArrayRef dim,
                        int64_t normalization, bool onesided, at::Tensor& out) {
  return into(out, fft_r2c(self, dim, normalization, onesided));
}

at::Tensor& fft_c2r_out(const at::Tensor& self, at::IntArrayRef dim,
                        int64_t normalization, int64_t last_dim_size, at::Tensor& out) {
  return into(out, fft_c2r(self, dim, normalization, last_dim_size));
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_fft_c2c", fft_c2c);
  m.impl("_fft_c2c.out", fft_c2c_out);
  m.impl("_fft_r2c", fft_r2c);
  m.impl("_fft_r2c.out", fft_r2c_out);
  m.impl("_fft_c2r", fft_c2r);
  m.impl("_fft_c2r.out", fft_c2r_out);
}

}  // namespace torch_neuron
