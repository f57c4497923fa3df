// SPDX-License-Identifier: MIT
// Special functions (torch.special, polygamma, igamma, the orthogonal
// polynomials) and the remaining elementwise operators: each one ISA
// function of the card (docs/hardware.md, "Special functions"), or a few
// card instructions composed (nan_to_num, lerp, threshold, prelu, rrelu,
// renorm, equal). No arithmetic on the host.
#include <limits>

#include "NeuronElementwise.h"

namespace torch_neuron {
namespace {

// The card's degree limit of a polynomial (TRN_SF_MAX_DEGREE of the device).
constexpr double kMaxDegree = 65536;

void check_floating(at::ScalarType t, const char* name) {
  TORCH_CHECK(at::isFloatingType(t), "neuron: ", name, " is not implemented "
              "for '", t, "' (floating types only)");
}

// ---- unary special functions: functional and out= ----

template <nisa_unary FN>
at::Tensor sp_un(const at::Tensor& a) {
  at::Tensor out = empty_neuron(a.sizes(), float_result(a.scalar_type()), a.device());
  return unary_into(FN, a, out);
}
template <nisa_unary FN>
at::Tensor& sp_un_out(const at::Tensor& a, at::Tensor& out) {
  at::ScalarType rt = float_result(a.scalar_type());
  TORCH_CHECK(at::canCast(rt, out.scalar_type()), "result type ", rt,
              " can't be cast to the desired output type ", out.scalar_type());
  return unary_out(FN, a, out);
}

// ---- binary special functions: float results (integers promote) ----

at::ScalarType float_binary_type(const at::Tensor& a, const at::Tensor& b) {
  return float_result(at::result_type(a, b));
}
template <nisa_binary OP>
at::Tensor sp_bin(const at::Tensor& a, const at::Tensor& b) {
  at::Tensor out = empty_neuron(at::infer_size(a.sizes(), b.sizes()),
                                float_binary_type(a, b), result_device(a, b));
  return binary_into(OP, a, b, 1.0, out);
}
template <nisa_binary OP>
at::Tensor& sp_bin_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  at::ScalarType rt = float_binary_type(a, b);
  TORCH_CHECK(at::canCast(rt, out.scalar_type()), "result type ", rt,
              " can't be cast to the desired output type ", out.scalar_type());
  resize_out(out, at::infer_size(a.sizes(), b.sizes()));
  return binary_into(OP, a, b, 1.0, out);
}
template <nisa_binary OP>
at::Tensor& sp_bin_(at::Tensor& a, const at::Tensor& b) {
  TORCH_CHECK(at::infer_size(a.sizes(), b.sizes()) == a.sizes(), "output with "
              "shape ", a.sizes(), " doesn't match the broadcast shape ",
              at::infer_size(a.sizes(), b.sizes()));
  return sp_bin_out<OP>(a, b, a);
}

// igamma and igammac: floating operands only, as on the CPU.
template <nisa_binary OP>
at::Tensor gam(const at::Tensor& a, const at::Tensor& b) {
  check_floating(at::result_type(a, b), OP == NISA_BIN_IGAMMA ? "igamma" : "igammac");
  return sp_bin<OP>(a, b);
}
template <nisa_binary OP>
at::Tensor& gam_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  check_floating(at::result_type(a, b), OP == NISA_BIN_IGAMMA ? "igamma" : "igammac");
  return sp_bin_out<OP>(a, b, out);
}
template <nisa_binary OP>
at::Tensor& gam_(at::Tensor& a, const at::Tensor& b) {
  check_floating(at::result_type(a, b), OP == NISA_BIN_IGAMMA ? "igamma" : "igammac");
  return sp_bin_<OP>(a, b);
}

// Polynomials of degree n: the card evaluates degrees up to kMaxDegree (its
// largest n is read back, one scalar, to refuse the others loudly).
void check_degree(const at::Tensor& n) {
  if (n.numel() == 0)
    return;
  double top = is_cpu_scalar(n) ? n.item<double>() : n.max().item<double>();
  TORCH_CHECK(!(top > kMaxDegree) || std::isinf(top), "neuron: orthogonal "
              "polynomials of degree above ", kMaxDegree, " are not supported on "
              "the card (got n = ", top, ")");
}
template <nisa_binary OP>
at::Tensor poly(const at::Tensor& x, const at::Tensor& n) {
  check_degree(n);
  return sp_bin<OP>(x, n);
}
template <nisa_binary OP>
at::Tensor& poly_out(const at::Tensor& x, const at::Tensor& n, at::Tensor& out) {
  check_degree(n);
  return sp_bin_out<OP>(x, n, out);
}

// nextafter: float32 on the card (the step is a float32 ulp).
at::Tensor& sp_nextafter_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  TORCH_CHECK(out.scalar_type() == at::kFloat && at::result_type(a, b) == at::kFloat,
              "neuron: nextafter is implemented for float32 only on the card, "
              "not for '", at::result_type(a, b), "'");
  resize_out(out, at::infer_size(a.sizes(), b.sizes()));
  return binary_into(NISA_BIN_NEXTAFTER, a, b, 1.0, out);
}
at::Tensor nextafter(const at::Tensor& a, const at::Tensor& b) {
  at::Tensor out = empty_neuron(at::infer_size(a.sizes(), b.sizes()),
                                at::result_type(a, b), result_device(a, b));
  return sp_nextafter_out(a, b, out);
}
at::Tensor& nextafter_(at::Tensor& a, const at::Tensor& b) {
  return sp_nextafter_out(a, b, a);
}

// fmax, fmin, heaviside: the operands' promoted type.
template <nisa_binary OP>
at::Tensor same_bin(const at::Tensor& a, const at::Tensor& b) {
  return binary(OP, a, b);
}
template <nisa_binary OP>
at::Tensor& same_bin_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  return binary_out(OP, a, b, 1.0, out);
}
void check_heaviside(const at::Tensor& a, const at::Tensor& b) {
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), "heaviside is not yet "
              "implemented for tensors with different dtypes");
}
at::Tensor heaviside(const at::Tensor& a, const at::Tensor& b) {
  check_heaviside(a, b);
  return binary(NISA_BIN_HEAVISIDE, a, b);
}
at::Tensor& heaviside_(at::Tensor& a, const at::Tensor& b) {
  check_heaviside(a, b);
  return binary_inplace(NISA_BIN_HEAVISIDE, a, b);
}
at::Tensor& heaviside_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  check_heaviside(a, b);
  return binary_out(NISA_BIN_HEAVISIDE, a, b, 1.0, out);
}

// ---- unary with parameters ----

at::Tensor& polygamma_into(int64_t n, const at::Tensor& a, at::Tensor& out) {
  TORCH_CHECK(n >= 0, "polygamma(n, x) does not support negative n.");
  return unary_into(NISA_UN_POLYGAMMA, a, out, static_cast<double>(n));
}
at::Tensor polygamma(int64_t n, const at::Tensor& a) {
  at::Tensor out = empty_neuron(a.sizes(), float_result(a.scalar_type()), a.device());
  return polygamma_into(n, a, out);
}
at::Tensor& polygamma_out(int64_t n, const at::Tensor& a, at::Tensor& out) {
  resize_out(out, a.sizes());
  return polygamma_into(n, a, out);
}
at::Tensor& polygamma_(at::Tensor& a, int64_t n) {
  check_floating(a.scalar_type(), "polygamma_");
  return polygamma_into(n, a, a);
}

at::Tensor& logit_into(const at::Tensor& a, c10::optional<double> eps, at::Tensor& out) {
  return unary_into(NISA_UN_LOGIT, a, out, eps.value_or(0.0), eps ? 1.0 : 0.0);
}
at::Tensor logit(const at::Tensor& a, c10::optional<double> eps) {
  at::Tensor out = empty_neuron(a.sizes(), float_result(a.scalar_type()), a.device());
  return logit_into(a, eps, out);
}
at::Tensor& logit_out(const at::Tensor& a, c10::optional<double> eps, at::Tensor& out) {
  resize_out(out, a.sizes());
  return logit_into(a, eps, out);
}
at::Tensor& logit_(at::Tensor& a, c10::optional<double> eps) {
  check_floating(a.scalar_type(), "logit_");
  return logit_into(a, eps, a);
}

double float_max(at::ScalarType t) {
  switch (t) {
    case at::kBFloat16: return static_cast<double>(std::numeric_limits<c10::BFloat16>::max());
    case at::kHalf: return static_cast<double>(std::numeric_limits<c10::Half>::max());
    default: return static_cast<double>(std::numeric_limits<float>::max());
  }
}
// NaN -> nan, +inf -> posinf, -inf -> neginf (defaults: 0 and the type's
// largest and lowest values); integers and bool are copied.
at::Tensor& nan_to_num_into(const at::Tensor& a, c10::optional<double> nan,
                            c10::optional<double> posinf,
                            c10::optional<double> neginf, at::Tensor& out) {
  check_device(out, a);
  nrn_stream* s = stream_for(out);
  nrn_tensor_desc o = desc(out), x = desc(a);
  if (!at::isFloatingType(a.scalar_type())) {
    if (!out.is_same(a))
      NEURON_OP(nrn_op_copy(s, &o, &x));
    return out;
  }
  double big = float_max(out.scalar_type());
  NEURON_OP(nrn_op_unary_param(s, NISA_UN_NAN_TO, &o, &x, nan.value_or(0.0), 0.0));
  NEURON_OP(nrn_op_unary_param(s, NISA_UN_INF_TO, &o, &o, posinf.value_or(big),
                               neginf.value_or(-big)));
  return out;
}
at::Tensor nan_to_num(const at::Tensor& a, c10::optional<double> nan,
                      c10::optional<double> posinf, c10::optional<double> neginf) {
  at::Tensor out = empty_neuron(a.sizes(), a.scalar_type(), a.device());
  return nan_to_num_into(a, nan, posinf, neginf, out);
}
at::Tensor& nan_to_num_out(const at::Tensor& a, c10::optional<double> nan,
                           c10::optional<double> posinf,
                           c10::optional<double> neginf, at::Tensor& out) {
  TORCH_CHECK(out.scalar_type() == a.scalar_type(), "nan_to_num: dtype of out: ",
              out.scalar_type(), " should be same as input: ", a.scalar_type());
  resize_out(out, a.sizes());
  return nan_to_num_into(a, nan, posinf, neginf, out);
}
at::Tensor& nan_to_num_(at::Tensor& a, c10::optional<double> nan,
                        c10::optional<double> posinf, c10::optional<double> neginf) {
  return nan_to_num_into(a, nan, posinf, neginf, a);
}

std::tuple<at::Tensor&, at::Tensor&> frexp_out(const at::Tensor& a, at::Tensor& mant,
                                               at::Tensor& expo) {
  TORCH_CHECK(at::isFloatingType(a.scalar_type()), "torch.frexp() only supports "
              "floating-point dtypes");
  TORCH_CHECK(mant.scalar_type() == a.scalar_type(), "torch.frexp() expects "
              "mantissa to have dtype ", a.scalar_type(), " but got ",
              mant.scalar_type());
  TORCH_CHECK(expo.scalar_type() == at::kInt, "torch.frexp() expects exponent "
              "to have int dtype but got ", expo.scalar_type());
  unary_out(NISA_UN_FREXP_EXP, a, expo);
  unary_out(NISA_UN_FREXP_MANT, a, mant);
  return {mant, expo};
}

// threshold(x, t, v) = x <= t ? v : x, computed in double: exact for every
// card type but int64 (refused).
at::Tensor& threshold_into(const at::Tensor& a, const at::Scalar& th,
                           const at::Scalar& v, at::Tensor& out) {
  TORCH_CHECK(a.scalar_type() != at::kLong && out.scalar_type() != at::kLong,
              "neuron: threshold is not implemented for 'Long' on the card");
  return unary_into(NISA_UN_THRESHOLD, a, out, th.toDouble(), v.toDouble());
}
at::Tensor threshold(const at::Tensor& a, const at::Scalar& th, const at::Scalar& v) {
  at::Tensor out = empty_neuron(a.sizes(), a.scalar_type(), a.device());
  return threshold_into(a, th, v, out);
}
at::Tensor& threshold_(at::Tensor& a, const at::Scalar& th, const at::Scalar& v) {
  return threshold_into(a, th, v, a);
}
at::Tensor& threshold_out(const at::Tensor& a, const at::Scalar& th,
                          const at::Scalar& v, at::Tensor& out) {
  resize_out(out, a.sizes());
  return threshold_into(a, th, v, out);
}

// logical_not into any dtype: 1 where x == 0 (NaN is true, so 0).
at::Tensor& logical_not_out(const at::Tensor& a, at::Tensor& out) {
  return unary_out(NISA_UN_LOGICAL_NOT, a, out);
}
at::Tensor& logical_not_(at::Tensor& a) {
  return unary_into(NISA_UN_LOGICAL_NOT, a, a);
}

// ---- composed ----

// mask (bool) = x > 0
at::Tensor sp_positive(const at::Tensor& x) {
  at::Tensor mask = empty_neuron(x.sizes(), at::kBool, x.device());
  nrn_tensor_desc dm = desc(mask), dx = desc(x);
  NEURON_OP(nrn_op_compare_scalar(stream_for(x), NISA_CMP_GT, &dm, &dx, 0.0));
  return mask;
}
at::Tensor filled(double v, at::ScalarType t, const at::Device& dev) {
  at::Tensor f = empty_neuron({}, t, dev);
  nrn_tensor_desc d = desc(f);
  NEURON_OP(nrn_op_fill(stream_for(f), &d, v));
  return f;
}
at::Tensor& where_into(const at::Tensor& m, const at::Tensor& a, const at::Tensor& b,
                       at::Tensor& out) {
  nrn_tensor_desc o = desc(out), dm = desc(m), da = desc(a), db = desc(b);
  NEURON_OP(nrn_op_where(stream_for(out), &o, &dm, &da, &db));
  return out;
}

at::Tensor prelu_kernel(const at::Tensor& x, const at::Tensor& w) {
  check_floating(x.scalar_type(), "prelu");
  return binary(NISA_BIN_PRELU, x, w);
}
// d/dx = x > 0 ? 1 : w, d/dw = x > 0 ? 0 : x (both of the broadcast shape;
// autograd sums the weight's to its shape).
std::tuple<at::Tensor, at::Tensor> prelu_kernel_backward(
    const at::Tensor& g, const at::Tensor& x, const at::Tensor& w) {
  at::Tensor mask = sp_positive(x);
  at::Tensor gi = binary(NISA_BIN_MUL, g, w);
  at::Tensor gw = binary(NISA_BIN_MUL, g, x);
  at::Tensor gx = empty_neuron(gi.sizes(), gi.scalar_type(), gi.device());
  where_into(mask, g, gi, gx);
  where_into(mask, filled(0.0, gw.scalar_type(), gw.device()), gw, gw);
  return {gx, gw};
}

// Eval: leaky_relu with the mean slope. Training: noise = x > 0 ? 1 :
// U(lower, upper) drawn on the card, result x * noise.
at::Tensor& rrelu_into(const at::Tensor& x, const at::Tensor& noise,
                       const at::Scalar& lower, const at::Scalar& upper,
                       bool training, c10::optional<at::Generator> gen,
                       at::Tensor& out) {
  check_floating(x.scalar_type(), "rrelu_with_noise");
  double lo = lower.toDouble(), hi = upper.toDouble();
  if (!training)
    return unary_into(NISA_UN_LEAKY_RELU, x, out, (lo + hi) / 2);
  at::Tensor n = noise;
  TORCH_CHECK(n.sizes() == x.sizes(), "rrelu_with_noise: noise has shape ",
              n.sizes(), ", the input ", x.sizes());
  n.uniform_(lo, hi, gen);
  where_into(sp_positive(x), filled(1.0, n.scalar_type(), n.device()), n, n);
  return binary_into(NISA_BIN_MUL, x, n, 1.0, out);
}
at::Tensor rrelu_with_noise(const at::Tensor& x, at::Tensor& noise,
                            const at::Scalar& lower, const at::Scalar& upper,
                            bool training, c10::optional<at::Generator> gen) {
  at::Tensor out = empty_neuron(x.sizes(), x.scalar_type(), x.device());
  return rrelu_into(x, noise, lower, upper, training, gen, out);
}
at::Tensor& rrelu_with_noise_(at::Tensor& x, at::Tensor& noise,
                              const at::Scalar& lower, const at::Scalar& upper,
                              bool training, c10::optional<at::Generator> gen) {
  return rrelu_into(x, noise, lower, upper, training, gen, x);
}
at::Tensor& rrelu_with_noise_out(const at::Tensor& x, at::Tensor& noise,
                                 const at::Scalar& lower, const at::Scalar& upper,
                                 bool training, c10::optional<at::Generator> gen,
                                 at::Tensor& out) {
  resize_out(out, x.sizes());
  return rrelu_into(x, noise, lower, upper, training, gen, out);
}

// lerp(a, b, w) = w < 0.5 ? a + w (b - a) : b - (b - a)(1 - w), the CPU's
// two-sided form (exact at both ends).
at::Tensor& lerp_into(const at::Tensor& a, const at::Tensor& b, const at::Tensor& w,
                      at::Tensor& out) {
  at::Tensor d = binary(NISA_BIN_SUB, b, a);
  at::Tensor lo = binary(NISA_BIN_ADD, a, binary(NISA_BIN_MUL, w, d));
  at::Tensor omw = binary(NISA_BIN_SUB, wrapped(1.0), w);
  at::Tensor hi = binary(NISA_BIN_SUB, b, binary(NISA_BIN_MUL, d, omw));
  at::Tensor mask = empty_neuron(w.sizes(), at::kBool, out.device());
  at::Tensor wn = operand(w, out.device());
  nrn_tensor_desc dm = desc(mask), dw = desc(wn);
  NEURON_OP(nrn_op_compare_scalar(stream_for(out), NISA_CMP_LT, &dm, &dw, 0.5));
  return where_into(mask, lo, hi, out);
}
at::Tensor& sp_lerp_out(const at::Tensor& a, const at::Tensor& b,
                            const at::Tensor& w, at::Tensor& out) {
  TORCH_CHECK(a.scalar_type() == b.scalar_type() && a.scalar_type() == w.scalar_type(),
              "expected dtype ", a.scalar_type(), " for `end` and `weight` but got ",
              b.scalar_type(), " and ", w.scalar_type());
  check_floating(a.scalar_type(), "lerp");
  resize_out(out, at::infer_size(at::infer_size(a.sizes(), b.sizes()), w.sizes()));
  return lerp_into(a, b, w, out);
}
at::Tensor& lerp_tensor_(at::Tensor& a, const at::Tensor& b, const at::Tensor& w) {
  TORCH_CHECK(at::infer_size(at::infer_size(a.sizes(), b.sizes()), w.sizes()) ==
              a.sizes(), "output with shape ", a.sizes(), " doesn't match the "
              "broadcast shape");
  return sp_lerp_out(a, b, w, a);
}

// renorm: each slice along @dim whose p-norm exceeds maxnorm is scaled by
// maxnorm / (norm + 1e-7).
at::Tensor& renorm_into(const at::Tensor& a, const at::Scalar& p, int64_t dim,
                        const at::Scalar& maxnorm, at::Tensor& out) {
  check_floating(a.scalar_type(), "renorm");
  TORCH_CHECK(p.toDouble() > 0, "renorm: non-positive-norm not supported");
  TORCH_CHECK(maxnorm.toDouble() >= 0, "renorm: expected maxnorm to be >= 0 but got ",
              maxnorm.toDouble());
  dim = c10::maybe_wrap_dim(dim, a.dim());
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < a.dim(); d++)
    if (d != dim)
      dims.push_back(d);
  at::Tensor norm = at::linalg_vector_norm(a, p, dims, /*keepdim=*/true);
  double mx = maxnorm.toDouble();
  at::Tensor f = binary(NISA_BIN_ADD, norm, wrapped(1e-7));
  f = binary(NISA_BIN_DIV, wrapped(mx), f);
  at::Tensor mask = empty_neuron(norm.sizes(), at::kBool, norm.device());
  nrn_tensor_desc dm = desc(mask), dn = desc(norm);
  NEURON_OP(nrn_op_compare_scalar(stream_for(norm), NISA_CMP_GT, &dm, &dn, mx));
  where_into(mask, f, filled(1.0, f.scalar_type(), f.device()), f);
  return binary_into(NISA_BIN_MUL, a, f, 1.0, out);
}
at::Tensor renorm(const at::Tensor& a, const at::Scalar& p, int64_t dim,
                  const at::Scalar& maxnorm) {
  at::Tensor out = empty_neuron(a.sizes(), a.scalar_type(), a.device());
  return renorm_into(a, p, dim, maxnorm, out);
}
at::Tensor& renorm_(at::Tensor& a, const at::Scalar& p, int64_t dim,
                    const at::Scalar& maxnorm) {
  return renorm_into(a, p, dim, maxnorm, a);
}
at::Tensor& renorm_out(const at::Tensor& a, const at::Scalar& p, int64_t dim,
                       const at::Scalar& maxnorm, at::Tensor& out) {
  resize_out(out, a.sizes());
  return renorm_into(a, p, dim, maxnorm, out);
}

// equal: same shape and every element equal (NaN is not), reduced on the
// card; the one bool is read back.
bool equal(const at::Tensor& a, const at::Tensor& b) {
  check_device(a, b);
  if (a.sizes() != b.sizes())
    return false;
  if (a.numel() == 0)
    return true;
  at::Tensor mask = empty_neuron(a.sizes(), at::kBool, a.device());
  compare_into(NISA_CMP_EQ, a, b, mask);
  return mask.all().item<bool>();
}

}  // namespace

// torch name, ISA function: functional and out= (float results).
#define NEURON_SPECIAL_UNARY_MAP(X)                                           \
  X(special_i0e, I0E) X(special_i1, I1) X(special_i1e, I1E)                   \
  X(special_ndtri, NDTRI) X(special_log_ndtr, LOG_NDTR)                       \
  X(special_erfcx, ERFCX) X(special_airy_ai, AIRY_AI)                         \
  X(special_bessel_j0, BESSEL_J0) X(special_bessel_j1, BESSEL_J1)             \
  X(special_bessel_y0, BESSEL_Y0) X(special_bessel_y1, BESSEL_Y1)             \
  X(special_modified_bessel_i0, I0) X(special_modified_bessel_i1, I1)         \
  X(special_modified_bessel_k0, BESSEL_K0)                                    \
  X(special_modified_bessel_k1, BESSEL_K1)                                    \
  X(special_scaled_modified_bessel_k0, BESSEL_K0E)                            \
  X(special_scaled_modified_bessel_k1, BESSEL_K1E)                            \
  X(special_spherical_bessel_j0, SPHERICAL_J0) X(special_entr, ENTR)          \
  X(angle, ANGLE)

// torch name, ISA operator: functional and out= (float results).
#define NEURON_SPECIAL_BINARY_MAP(X)                                          \
  X(special_zeta, ZETA) X(special_xlog1py, XLOG1PY)
#define NEURON_POLY_MAP(X)                                                    \
  X(special_chebyshev_polynomial_t, CHEB_T)                                   \
  X(special_chebyshev_polynomial_u, CHEB_U)                                   \
  X(special_chebyshev_polynomial_v, CHEB_V)                                   \
  X(special_chebyshev_polynomial_w, CHEB_W)                                   \
  X(special_shifted_chebyshev_polynomial_t, SCHEB_T)                          \
  X(special_shifted_chebyshev_polynomial_u, SCHEB_U)                          \
  X(special_shifted_chebyshev_polynomial_v, SCHEB_V)                          \
  X(special_shifted_chebyshev_polynomial_w, SCHEB_W)                          \
  X(special_hermite_polynomial_h, HERMITE_H)                                  \
  X(special_hermite_polynomial_he, HERMITE_HE)                                \
  X(special_laguerre_polynomial_l, LAGUERRE_L)                                \
  X(special_legendre_polynomial_p, LEGENDRE_P)

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
#define REG_SP_UNARY(name, FN)                                                \
  m.impl(#name, sp_un<NISA_UN_##FN>);                                         \
  m.impl(#name ".out", sp_un_out<NISA_UN_##FN>);
  NEURON_SPECIAL_UNARY_MAP(REG_SP_UNARY)
#define REG_SP_BINARY(name, OP)                                               \
  m.impl(#name, sp_bin<NISA_BIN_##OP>);                                       \
  m.impl(#name ".out", sp_bin_out<NISA_BIN_##OP>);
  NEURON_SPECIAL_BINARY_MAP(REG_SP_BINARY)
#define REG_POLY(name, OP)                                                    \
  m.impl(#name, poly<NISA_BIN_##OP>);                                         \
  m.impl(#name ".out", poly_out<NISA_BIN_##OP>);
  NEURON_POLY_MAP(REG_POLY)
  m.impl("igamma", gam<NISA_BIN_IGAMMA>);
  m.impl("igamma_", gam_<NISA_BIN_IGAMMA>);
  m.impl("igamma.out", gam_out<NISA_BIN_IGAMMA>);
  m.impl("igammac", gam<NISA_BIN_IGAMMAC>);
  m.impl("igammac_", gam_<NISA_BIN_IGAMMAC>);
  m.impl("igammac.out", gam_out<NISA_BIN_IGAMMAC>);
  m.impl("nextafter", nextafter);
  m.impl("nextafter_", nextafter_);
  m.impl("nextafter.out", sp_nextafter_out);
  m.impl("fmax", same_bin<NISA_BIN_FMAX>);
  m.impl("fmax.out", same_bin_out<NISA_BIN_FMAX>);
  m.impl("fmin", same_bin<NISA_BIN_FMIN>);
  m.impl("fmin.out", same_bin_out<NISA_BIN_FMIN>);
  m.impl("heaviside", heaviside);
  m.impl("heaviside_", heaviside_);
  m.impl("heaviside.out", heaviside_out);
  m.impl("polygamma", polygamma);
  m.impl("polygamma_", polygamma_);
  m.impl("polygamma.out", polygamma_out);
  m.impl("logit", logit);
  m.impl("logit_", logit_);
  m.impl("logit.out", logit_out);
  m.impl("nan_to_num", nan_to_num);
  m.impl("nan_to_num_", nan_to_num_);
  m.impl("nan_to_num.out", nan_to_num_out);
  m.impl("frexp.Tensor_out", frexp_out);
  m.impl("threshold", threshold);
  m.impl("threshold_", threshold_);
  m.impl("threshold.out", threshold_out);
  m.impl("logical_not_", logical_not_);
  m.impl("logical_not.out", logical_not_out);
  m.impl("_prelu_kernel", prelu_kernel);
  m.impl("_prelu_kernel_backward", prelu_kernel_backward);
  m.impl("rrelu_with_noise", rrelu_with_noise);
  m.impl("rrelu_with_noise_", rrelu_with_noise_);
  m.impl("rrelu_with_noise.out", rrelu_with_noise_out);
  m.impl("lerp_.Tensor", lerp_tensor_);
  m.impl("lerp.Tensor_out", sp_lerp_out);
  m.impl("renorm", renorm);
  m.impl("renorm_", renorm_);
  m.impl("renorm.out", renorm_out);
  m.impl("equal", equal);
}

}  // namespace torch_neuron
