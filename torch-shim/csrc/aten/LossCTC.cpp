// SPDX-License-Identifier: MIT
// CTC loss on the card: the alpha (forward) and beta (backward) recursions
// of Graves et al. over the blank-extended targets, one time step at a time,
// composed of card operations (gather, logaddexp, where, scatter max/add);
// the gradient is the CPU's: exp(lp) - exp(logsumexp_{s: l'(s) = c}
// (alpha + beta) + nll - lp), 0 past a sample's input length.
// The lengths are host integers (shape-like metadata, as on the CPU); the
// masks built from them are constants copied to the card.
#include "NeuronScatter.h"

#include <limits>

namespace torch_neuron {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

struct Ctc {
  int64_t T, N, C, S, L, blank;
  std::vector<int64_t> il, tl;
  at::Tensor ext;     // [N, L] int64: blank, t1, blank, t2, ..., blank
  at::Tensor lp_ext;  // [T, N, L]: log_probs at the extended targets
  at::Tensor skip;    // [N, L] bool: s may come from s - 2
  at::Tensor ninf;    // 0-dim -inf of log_probs' dtype
};

at::Tensor host_long(const std::vector<int64_t>& v, const at::Device& dev) {
  return at::tensor(v, at::TensorOptions().dtype(at::kLong)).to(dev);
}

at::Tensor host_bool(const std::vector<int64_t>& v, std::vector<int64_t> shape,
                     const at::Device& dev) {
  return host_long(v, dev).view(shape).ne(0);
}

Ctc ctc_setup(const at::Tensor& lp, const at::Tensor& targets, at::IntArrayRef il,
              at::IntArrayRef tl, int64_t blank) {
  check_device(lp, targets);
  TORCH_CHECK(lp.dim() == 3, "neuron: ctc_loss expects log_probs of shape [T, N, C], got ",
              lp.sizes());
  TORCH_CHECK(at::isFloatingType(lp.scalar_type()), "ctc_loss: expected floating "
              "log_probs, got ", lp.scalar_type());
  TORCH_CHECK(targets.scalar_type() == at::kLong || targets.scalar_type() == at::kInt,
              "ctc_loss: targets must be int64 or int32, got ", targets.scalar_type());
  Ctc c;
  c.T = lp.size(0), c.N = lp.size(1), c.C = lp.size(2), c.blank = blank;
  TORCH_CHECK(blank >= 0 && blank < c.C, "blank must be in label range");
  TORCH_CHECK(static_cast<int64_t>(il.size()) == c.N, "input_lengths must be of size batch_size");
  TORCH_CHECK(static_cast<int64_t>(tl.size()) == c.N, "target_lengths must be of size batch_size");
  c.il.assign(il.begin(), il.end());
  c.tl.assign(tl.begin(), tl.end());
  c.S = 0;
  int64_t total = 0;
  for (int64_t n = 0; n < c.N; n++) {
    TORCH_CHECK(c.il[n] >= 0 && c.il[n] <= c.T, "Expected input_lengths to have value at "
                "most ", c.T, ", but got value ", c.il[n]);
    TORCH_CHECK(c.il[n] > 0, "neuron: ctc_loss with an input length of 0 is not supported");
    TORCH_CHECK(c.tl[n] >= 0, "target lengths must be non-negative");
    c.S = std::max(c.S, c.tl[n]);
    total += c.tl[n];
  }
  c.L = 2 * c.S + 1;
  at::Device dev = lp.device();
  at::Tensor tg = targets.to(at::kLong);
  // the labels of each sample, [N, S]; past its length: the blank
  std::vector<int64_t> pos(c.N * c.S, 0), keep(c.N * c.S, 0);
  int64_t off = 0;
  for (int64_t n = 0; n < c.N; n++) {
    for (int64_t k = 0; k < c.tl[n]; k++) {
      pos[n * c.S + k] = targets.dim() == 1 ? off + k : n * targets.size(1) + k;
      keep[n * c.S + k] = 1;
    }
    off += c.tl[n];
  }
  if (targets.dim() == 1) {
    TORCH_CHECK(targets.numel() >= total, "Expected tensor to have size at least ", total,
                " at dimension 1, but got size ", targets.numel());
  } else {
    TORCH_CHECK(targets.dim() == 2 && targets.size(0) == c.N && targets.size(1) >= c.S,
                "Expected targets of shape [", c.N, ", >=", c.S, "], got ", targets.sizes());
  }
  at::Tensor blanks = at::full({c.N, c.L}, blank, tg.options());
  c.ext = blanks;
  if (c.S > 0) {
    at::Tensor lab = tg.reshape({-1}).index_select(0, host_long(pos, dev)).view({c.N, c.S});
    lab = at::where(host_bool(keep, {c.N, c.S}, dev), lab, at::scalar_tensor(blank, tg.options()));
    c.ext.slice(1, 1, c.L, 2).copy_(lab);
  }
  c.lp_ext = lp.gather(2, c.ext.unsqueeze(0).expand({c.T, c.N, c.L}));
  c.skip = at::zeros({c.N, c.L}, tg.options().dtype(at::kBool));
  if (c.L > 2) {
    at::Tensor e2 = c.ext.slice(1, 2, c.L), e0 = c.ext.slice(1, 0, c.L - 2);
    c.skip.slice(1, 2, c.L).copy_(e2.ne(blank).logical_and_(e2.ne(e0)));
  }
  c.ninf = at::scalar_tensor(kNegInf, lp.options());
  return c;
}

// a shifted by @k to higher (k > 0) or lower (k < 0) s, -inf filling in.
at::Tensor shift(const at::Tensor& a, int64_t k, const at::Tensor& ninf) {
  int64_t L = a.size(1), m = std::abs(k);
  if (m >= L)
    return ninf.expand(a.sizes()).clone();
  at::Tensor pad = ninf.expand({a.size(0), m});
  return k > 0 ? at::cat({pad, a.slice(1, 0, L - m)}, 1) : at::cat({a.slice(1, m, L), pad}, 1);
}

std::tuple<at::Tensor, at::Tensor> ctc_loss(const at::Tensor& lp, const at::Tensor& targets,
                                            at::IntArrayRef il, at::IntArrayRef tl,
                                            int64_t blank, bool zero_infinity) {
  Ctc c = ctc_setup(lp, targets, il, tl, blank);
  at::Device dev = lp.device();
  at::Tensor log_alpha = at::empty({c.N, c.T, c.L}, lp.options());
  std::vector<int64_t> first(c.L, 0);
  for (int64_t s = 0; s < std::min<int64_t>(2, c.L); s++) first[s] = 1;
  at::Tensor a = at::where(host_bool(first, {1, c.L}, dev), c.lp_ext[0], c.ninf);
  log_alpha.select(1, 0).copy_(a);
  for (int64_t t = 1; t < c.T; t++) {
    at::Tensor a3 = at::where(c.skip, shift(a, 2, c.ninf), c.ninf);
    a = at::logaddexp(at::logaddexp(a, shift(a, 1, c.ninf)), a3).add_(c.lp_ext[t]);
    log_alpha.select(1, t).copy_(a);
  }
  // -log p(l | x) = -logaddexp(alpha[Tn - 1, 2 Sn], alpha[Tn - 1, 2 Sn - 1])
  std::vector<int64_t> p1(c.N), p2(c.N), has2(c.N);
  for (int64_t n = 0; n < c.N; n++) {
    int64_t base = n * c.T * c.L + (c.il[n] - 1) * c.L;
    p1[n] = base + 2 * c.tl[n];
    p2[n] = base + std::max<int64_t>(2 * c.tl[n] - 1, 0);
    has2[n] = c.tl[n] > 0;
  }
  at::Tensor flat = log_alpha.reshape({-1});
  at::Tensor v1 = flat.index_select(0, host_long(p1, dev));
  at::Tensor v2 = at::where(host_bool(has2, {c.N}, dev),
                            flat.index_select(0, host_long(p2, dev)), c.ninf);
  at::Tensor nll = at::logaddexp(v1, v2).neg_();
  (void)zero_infinity;  // applied by ctc_loss itself (forward) and the backward
  return {nll, log_alpha};
}

at::Tensor ctc_loss_backward(const at::Tensor& grad, const at::Tensor& lp,
                             const at::Tensor& targets, at::IntArrayRef il, at::IntArrayRef tl,
                             const at::Tensor& nll, const at::Tensor& log_alpha, int64_t blank,
                             bool zero_infinity) {
  Ctc c = ctc_setup(lp, targets, il, tl, blank);
  at::Device dev = lp.device();
  // per time step: the sample ends here / is still running
  std::vector<int64_t> ends(c.T * c.N, 0), runs(c.T * c.N, 0), endpos(c.N * c.L, 0);
  for (int64_t n = 0; n < c.N; n++) {
    for (int64_t t = 0; t < c.T; t++) {
      ends[t * c.N + n] = t == c.il[n] - 1;
      runs[t * c.N + n] = t < c.il[n] - 1;
    }
    endpos[n * c.L + 2 * c.tl[n]] = 1;
    if (c.tl[n] > 0)
      endpos[n * c.L + 2 * c.tl[n] - 1] = 1;
  }
  at::Tensor end_t = host_bool(ends, {c.T, c.N, 1}, dev);
  at::Tensor run_t = host_bool(runs, {c.T, c.N, 1}, dev);
  at::Tensor end_s = host_bool(endpos, {c.N, c.L}, dev);
  at::Tensor skip_b = shift(c.skip.to(lp.scalar_type()), -2, at::scalar_tensor(0, lp.options()))
                      .ne(0);
  at::Tensor log_beta = at::empty({c.T, c.N, c.L}, lp.options());
  at::Tensor b = c.ninf.expand({c.N, c.L}).clone();
  for (int64_t t = c.T; t-- > 0;) {
    at::Tensor start = at::where(end_s, c.lp_ext[t], c.ninf);
    at::Tensor b3 = at::where(skip_b, shift(b, -2, c.ninf), c.ninf);
    at::Tensor rec = at::logaddexp(at::logaddexp(b, shift(b, -1, c.ninf)), b3)
                     .add_(c.lp_ext[t]);
    b = at::where(end_t[t], start, at::where(run_t[t], rec, c.ninf));
    log_beta[t].copy_(b);
  }
  // logsumexp over the s with l'(s) = c of alpha + beta, [T, N, C]
  at::Tensor ab = log_alpha.transpose(0, 1).add(log_beta);
  at::Tensor idx = c.ext.unsqueeze(0).expand({c.T, c.N, c.L});
  at::Tensor m = c.ninf.expand({c.T, c.N, c.C}).clone();
  scatter_elements(m, 2, idx, ab, NISA_SCAT_MAX, "ctc_loss_backward");
  at::Tensor m0 = at::where(m.isinf(), at::zeros({}, m.options()), m);
  at::Tensor e = (ab - m0.gather(2, idx)).exp_();
  at::Tensor sum = at::zeros({c.T, c.N, c.C}, lp.options());
  scatter_elements(sum, 2, idx, e, NISA_SCAT_ADD, "ctc_loss_backward");
  at::Tensor lcab = sum.log_().add_(m0);
  at::Tensor g = grad.reshape({1, c.N, 1});
  at::Tensor r = (lp.exp() - (lcab + nll.reshape({1, c.N, 1}) - lp).exp_()) * g;
  std::vector<int64_t> valid(c.T * c.N, 0);
  for (int64_t n = 0; n < c.N; n++)
    for (int64_t t = 0; t < c.il[n]; t++) valid[t * c.N + n] = 1;
  at::Tensor zero = at::zeros({}, lp.options());
  r = at::where(host_bool(valid, {c.T, c.N, 1}, dev), r, zero);
  if (zero_infinity)
    r = at::where(nll.reshape({1, c.N, 1}).isinf(), zero, r);
  return r;
}

std::vector<int64_t> host_lengths(const at::Tensor& t) {
  // lengths are metadata (the CPU reads them on the host too)
  at::Tensor h = t.to(at::kCPU).to(at::kLong).contiguous();
  return std::vector<int64_t>(h.data_ptr<int64_t>(), h.data_ptr<int64_t>() + h.numel());
}

std::tuple<at::Tensor, at::Tensor> ctc_loss_tensor(const at::Tensor& lp, const at::Tensor& targets,
                                                   const at::Tensor& il, const at::Tensor& tl,
                                                   int64_t blank, bool zero_infinity) {
  return ctc_loss(lp, targets, host_lengths(il), host_lengths(tl), blank, zero_infinity);
}

at::Tensor ctc_loss_backward_tensor(const at::Tensor& grad, const at::Tensor& lp,
                                    const at::Tensor& targets, const at::Tensor& il,
                                    const at::Tensor& tl, const at::Tensor& nll,
                                    const at::Tensor& log_alpha, int64_t blank,
                                    bool zero_infinity) {
  return ctc_loss_backward(grad, lp, targets, host_lengths(il), host_lengths(tl), nll,
                           log_alpha, blank, zero_infinity);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_ctc_loss", ctc_loss);
  m.impl("_ctc_loss.Tensor", ctc_loss_tensor);
  m.impl("_ctc_loss_backward", ctc_loss_backward);
  m.impl("_ctc_loss_backward.Tensor", ctc_loss_backward_tensor);
}

}  // namespace torch_neuron
