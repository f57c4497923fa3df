// SPDX-License-Identifier: MIT
// Special functions (torch.special, polygamma, igamma, logit, the
// orthogonal polynomials): each one ISA function of the card
// (docs/hardware.md, "Special functions"). No arithmetic on the host.
#include <limits>

#include "NeuronElementwise.h"

namespace torch_neuron {
namespace {

// The card's degree limit of a polynomial (TRN_SF_MAX_DEGREE of the device).
constexpr double kMaxDegree = 65536;

// ---- unary special functions: functional and out= ----

template <nisa_unary FN>
at::Tensor sp_un(const at::Tensor& a) {
  at::Tensor out = unary_result(UnaryResult::Float, a, {}, FN).tensor;
  return unary_into(FN, a, out);
}
template <nisa_unary FN>
at::Tensor& sp_un_out(const at::Tensor& a, at::Tensor& out) {
  return compute_in(unary_result(UnaryResult::Float, a, out, FN), out,
                    [&](at::Tensor& o) { unary_into(FN, a, o); });
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

// logit's backward: grad / (x (1 - x)) in one LOGIT_GRAD where x lies in
// [lo, hi], else NaN (no eps: [0, 1]) or 0 (eps: [eps, 1 - eps], the bounds
// in the operands' common type, which the CPU's kernel computes in) -- as
// the CPU's vectorized kernel selects, a NaN x outside.
at::Tensor& logit_backward_into(const at::Tensor& grad, const at::Tensor& x,
                                std::optional<double> eps, at::Tensor& out) {
  binary_out(NISA_BIN_LOGIT_GRAD, grad, x, 1.0, out);
  double lo = 0.0, hi = 1.0, outside = std::numeric_limits<double>::quiet_NaN();
  if (eps && *eps >= 0) {
    auto in_type = [&](double v) {
      return at::scalar_tensor(v, at::kDouble).to(at::result_type(grad, x)).item<double>();
    };
    lo = in_type(*eps);
    hi = in_type(1.0 - lo);
    outside = 0.0;
  }
  at::Tensor inside = empty_neuron(x.sizes(), at::kBool, x.device());
  at::Tensor below_hi = empty_neuron(x.sizes(), at::kBool, x.device());
  nrn_stream* s = stream_for(x);
  nrn_tensor_desc dx = desc(x), din = desc(inside), dhi = desc(below_hi);
  NEURON_OP(nrn_op_compare_scalar(s, NISA_CMP_GE, &din, &dx, lo));
  NEURON_OP(nrn_op_compare_scalar(s, NISA_CMP_LE, &dhi, &dx, hi));
  NEURON_OP(nrn_op_compare(s, NISA_CMP_LAND, &din, &din, &dhi));
  return where_into(inside, out, filled(outside, out.scalar_type(), out.device()), out);
}
at::Tensor logit_backward(const at::Tensor& grad, const at::Tensor& x,
                          std::optional<double> eps) {
  check_floating(x.scalar_type(), "logit_backward");
  at::Tensor out = binary_result(NISA_BIN_LOGIT_GRAD, grad, x).tensor;
  return logit_backward_into(grad, x, eps, out);
}
at::Tensor& logit_backward_out(const at::Tensor& grad, const at::Tensor& x,
                               std::optional<double> eps, at::Tensor& out) {
  check_floating(x.scalar_type(), "logit_backward");
  return logit_backward_into(grad, x, eps, out);
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
  X(special_spherical_bessel_j0, SPHERICAL_J0) X(special_entr, ENTR)

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
  m.impl("polygamma", polygamma);
  m.impl("polygamma_", polygamma_);
  m.impl("polygamma.out", polygamma_out);
  m.impl("logit", logit);
  m.impl("logit_", logit_);
  m.impl("logit.out", logit_out);
  m.impl("logit_backward", logit_backward);
  m.impl("logit_backward.grad_input", logit_backward_out);
}

}  // namespace torch_neuron
