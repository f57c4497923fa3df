// SPDX-License-Identifier: MIT
// torchaudio's RNN-T loss (torchaudio::rnnt_loss, Graves 2012) on the card:
// the costs and the gradients with respect to the logits, both computed in
// the forward as torchaudio's CPU and CUDA kernels do (torchaudio's own
// autograd kernel saves the gradients and scales them in the backward).
//
// For logits [B, T, U + 1, D] (U: the longest target), per sequence b with
// T_b = logit_lengths[b] frames and U_b = target_lengths[b] + 1 lattice rows,
// in float (the CPU's accumulation type) whatever the logits' dtype:
//   denom  = logsumexp over D of the logits   (0 without fused_log_softmax:
//            the logits are log-probabilities already)
//   skip   = logits[.., blank] - denom,  emit = logits[.., targets[u]] - denom
//   alpha(t, u) = lse(alpha(t-1, u) + skip(t-1, u), alpha(t, u-1) + emit(t, u-1))
//   beta(t, u)  = lse(beta(t+1, u) + skip(t, u), beta(t, u+1) + emit(t, u)),
//                 beta(T_b-1, U_b-1) = skip(T_b-1, U_b-1)
//   cost = -beta(0, 0)
// The recursions run over the anti-diagonals t + u = n of the lattice, all
// sequences at once: each diagonal is a strided view of a lattice bordered
// with -inf, so a step is a few card operations and no host work. The
// gradient is torchaudio's, branch by branch (a blank leaving (t, u), the
// target leaving it, anything else), clamped to [-clamp, clamp] if clamp > 0,
// and 0 at the padded (t, u) of each sequence.
//
// The kernel is registered for torchaudio::rnnt_loss whether torchaudio is
// installed or not: the dispatcher keeps an implementation of an operator
// nobody has defined and uses it once torchaudio's library defines it. It
// is boxed, so no C++ signature is checked against torchaudio's schema; a
// schema other than the one written for (another torchaudio) runs on the
// CPU through the fallback, loudly.
#include <limits>

#include "NeuronOps.h"

namespace torch_neuron {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// The anti-diagonal of the contiguous lattice @lat [B, R, C] that starts at
// (r0, c0) and runs @len elements towards (r0 + len - 1, c0 - len + 1): a
// [B, len] view.
at::Tensor anti(const at::Tensor& lat, int64_t r0, int64_t c0, int64_t len) {
  int64_t R = lat.size(1), C = lat.size(2);
  return lat.as_strided({lat.size(0), len}, {R * C, C - 1},
                        lat.storage_offset() + r0 * C + c0);
}

struct Rnnt {
  int64_t B, T, U1, D, blank;
  at::Tensor valid;     // [B, T, U1]: (t, u) is in sequence b's lattice
  at::Tensor end;       // [B, T, U1]: (t, u) = (T_b - 1, U_b - 1)
  at::Tensor leave_t;   // [B, T, U1]: the blank branch of the gradient applies
  at::Tensor emits;     // [B, 1, U1]: u < U_b - 1 (a target label leaves u)
  at::Tensor labels;    // [B, U1] int64: targets[u] where emits, blank elsewhere
};

at::Tensor range_on(int64_t n, const at::Device& dev) {
  return at::arange(n, at::TensorOptions().dtype(at::kLong).device(dev));
}

// torchaudio's checks (same messages), then the lengths' and the labels'
// bounds, read from the card once.
Rnnt check_and_setup(const at::Tensor& logits, const at::Tensor& targets,
                     const at::Tensor& logit_lengths, const at::Tensor& target_lengths,
                     int64_t blank) {
  for (const at::Tensor* t : {&targets, &logit_lengths, &target_lengths})
    TORCH_CHECK(t->device() == logits.device(), "logits and ",
                t == &targets ? "targets" : t == &logit_lengths ? "logit_lengths"
                                                                  : "target_lengths",
                " must be on the same device");
  TORCH_CHECK(logits.scalar_type() == at::kFloat || logits.scalar_type() == at::kHalf,
              "logits must be float32 or float16 (half) type");
  TORCH_CHECK(targets.scalar_type() == at::kInt, "targets must be int32 type");
  TORCH_CHECK(logit_lengths.scalar_type() == at::kInt, "logit_lengths must be int32 type");
  TORCH_CHECK(target_lengths.scalar_type() == at::kInt, "target_lengths must be int32 type");
  TORCH_CHECK(logits.is_contiguous(), "logits must be contiguous");
  TORCH_CHECK(targets.is_contiguous(), "targets must be contiguous");
  TORCH_CHECK(logit_lengths.is_contiguous(), "logit_lengths must be contiguous");
  TORCH_CHECK(target_lengths.is_contiguous(), "target_lengths must be contiguous");
  TORCH_CHECK(logits.dim() == 4, "logits must be 4-D (batch, time, target, class)");
  TORCH_CHECK(targets.dim() == 2, "targets must be 2-D (batch, max target length)");
  TORCH_CHECK(logit_lengths.dim() == 1, "logit_lengths must be 1-D");
  TORCH_CHECK(target_lengths.dim() == 1, "target_lengths must be 1-D");
  TORCH_CHECK(logit_lengths.size(0) == logits.size(0),
              "batch dimension mismatch between logits and logit_lengths");
  TORCH_CHECK(target_lengths.size(0) == logits.size(0),
              "batch dimension mismatch between logits and target_lengths");
  TORCH_CHECK(targets.size(0) == logits.size(0),
              "batch dimension mismatch between logits and targets");
  TORCH_CHECK(blank >= 0 && blank < logits.size(-1),
              "blank must be within [0, logits.shape[-1])");
  TORCH_CHECK(logits.size(0) > 0, "neuron: rnnt_loss: the batch is empty");

  Rnnt r;
  r.B = logits.size(0), r.T = logits.size(1), r.U1 = logits.size(2), r.D = logits.size(3);
  r.blank = blank;
  const at::Device dev = logits.device();
  at::Tensor Tl = logit_lengths.to(at::kLong), Sl = target_lengths.to(at::kLong);
  int64_t S = targets.size(1);
  at::Tensor in_target = range_on(S, dev).view({1, S}).lt(Sl.view({r.B, 1}));
  at::Tensor tg = at::where(in_target, targets.to(at::kLong), blank);
  // one read from the card: max T_b, max U_b - 1, min T_b, min U_b - 1, and
  // the smallest and largest label inside the targets' lengths
  at::Tensor lab = S > 0 ? at::stack({tg.min(), tg.max()})
                         : at::full({2}, blank, Tl.options());
  at::Tensor host = at::cat({at::stack({Tl.max(), Sl.max(), Tl.min(), Sl.min()}), lab})
                        .to(at::kCPU);
  const int64_t* h = host.data_ptr<int64_t>();
  TORCH_CHECK(r.T == h[0], "input length mismatch");
  TORCH_CHECK(r.U1 == h[1] + 1, "output length mismatch");
  TORCH_CHECK(S + 1 == r.U1, "target length mismatch");
  TORCH_CHECK(h[2] > 0, "neuron: rnnt_loss: logit_lengths must be positive, got ", h[2]);
  TORCH_CHECK(h[3] >= 0, "neuron: rnnt_loss: target_lengths must be non-negative, got ",
              h[3]);
  TORCH_CHECK(h[4] >= 0 && h[5] < r.D, "neuron: rnnt_loss: targets must be class "
              "indices in [0, ", r.D, "), found ", h[4] < 0 ? h[4] : h[5]);

  at::Tensor Ul = Sl.add(1);
  at::Tensor t = range_on(r.T, dev).view({1, r.T, 1});
  at::Tensor u = range_on(r.U1, dev).view({1, 1, r.U1});
  at::Tensor Tb = Tl.view({r.B, 1, 1}), Ub = Ul.view({r.B, 1, 1});
  r.valid = t.lt(Tb).logical_and(u.lt(Ub));
  r.end = t.eq(Tb.sub(1)).logical_and(u.eq(Ub.sub(1)));
  r.leave_t = t.lt(Tb.sub(1)).logical_or(r.end);
  r.emits = u.lt(Ub.sub(1));
  r.labels = at::cat({tg, at::full({r.B, 1}, blank, tg.options())}, 1);
  return r;
}

// The logits' log-probabilities of the blank and of each target label, and
// the denominators, [B, T, U1] float each.
std::tuple<at::Tensor, at::Tensor, at::Tensor> log_probs(const Rnnt& r, const at::Tensor& lf,
                                                         bool fused) {
  at::Tensor idx = r.labels.view({r.B, 1, r.U1, 1}).expand({r.B, r.T, r.U1, 1});
  at::Tensor skip = lf.select(3, r.blank);
  at::Tensor emit = lf.gather(3, idx).squeeze(3);
  if (!fused)
    return {skip, emit, at::zeros_like(skip)};
  at::Tensor denom = lf.logsumexp(3);
  return {skip - denom, emit - denom, denom};
}

// A [B, T + 1, U1 + 1] lattice of @fill with @x [B, T, U1] at the rows and
// columns starting at @at (0: the border at the end, 1: at the start).
at::Tensor bordered(const Rnnt& r, const at::Tensor& x, int64_t at,
                    const at::Scalar& fill = kNegInf) {
  at::Tensor lat = at::full({r.B, r.T + 1, r.U1 + 1}, fill, x.options());
  lat.slice(1, at, at + r.T).slice(2, at, at + r.U1).copy_(x);
  return lat;
}

// alpha [B, T, U1]; rows and columns -1 of the bordered lattice are -inf.
at::Tensor alphas(const Rnnt& r, const at::Tensor& skip, const at::Tensor& emit) {
  at::Tensor A = at::full({r.B, r.T + 1, r.U1 + 1}, kNegInf, skip.options());
  A.select(1, 1).select(1, 1).fill_(0);
  at::Tensor S = bordered(r, skip, 1), E = bordered(r, emit, 1);
  for (int64_t n = 1; n <= r.T + r.U1 - 2; n++) {
    int64_t t0 = std::max<int64_t>(0, n - (r.U1 - 1)), t1 = std::min(r.T - 1, n);
    int64_t len = t1 - t0 + 1;
    // (t, u) is (t + 1, u + 1) in A; from (t - 1, u) by a blank, (t, u - 1) by a label
    at::Tensor up = anti(A, t0, n - t0 + 1, len).add(anti(S, t0, n - t0 + 1, len));
    at::Tensor left = anti(A, t0 + 1, n - t0, len).add(anti(E, t0 + 1, n - t0, len));
    anti(A, t0 + 1, n - t0 + 1, len).copy_(at::logaddexp(up, left));
  }
  return A.slice(1, 1).slice(2, 1);
}

// beta in a [B, T + 1, U1 + 1] lattice whose last row and column are -inf.
at::Tensor betas(const Rnnt& r, const at::Tensor& skip, const at::Tensor& emit) {
  at::Tensor Bt = at::full({r.B, r.T + 1, r.U1 + 1}, kNegInf, skip.options());
  at::Tensor S = bordered(r, skip, 0), E = bordered(r, emit, 0);
  // where the recursion applies, and what the others hold: skip at a
  // sequence's last (t, u), -inf outside its lattice
  at::Tensor inner = bordered(r, r.valid.logical_and(r.end.logical_not()), 0, false);
  at::Tensor ninf = at::scalar_tensor(kNegInf, skip.options());
  at::Tensor outer = bordered(r, at::where(r.end, skip, ninf), 0);
  for (int64_t n = r.T + r.U1 - 2; n >= 0; n--) {
    int64_t t0 = std::max<int64_t>(0, n - (r.U1 - 1)), t1 = std::min(r.T - 1, n);
    int64_t len = t1 - t0 + 1, u0 = n - t0;
    at::Tensor down = anti(Bt, t0 + 1, u0, len).add(anti(S, t0, u0, len));
    at::Tensor right = anti(Bt, t0, u0 + 1, len).add(anti(E, t0, u0, len));
    anti(Bt, t0, u0, len).copy_(at::where(anti(inner, t0, u0, len),
                                          at::logaddexp(down, right),
                                          anti(outer, t0, u0, len)));
  }
  return Bt;
}

std::tuple<at::Tensor, at::Tensor> rnnt_loss(const at::Tensor& logits, const at::Tensor& targets,
                                             const at::Tensor& logit_lengths,
                                             const at::Tensor& target_lengths, int64_t blank,
                                             double clamp, bool fused) {
  Rnnt r = check_and_setup(logits, targets, logit_lengths, target_lengths, blank);
  at::Tensor lf = logits.to(at::kFloat);
  auto [skip, emit, denom] = log_probs(r, lf, fused);
  at::Tensor alpha = alphas(r, skip, emit);
  at::Tensor Bt = betas(r, skip, emit);
  at::Tensor beta = Bt.slice(1, 0, r.T).slice(2, 0, r.U1);
  at::Tensor cost = beta.select(1, 0).select(1, 0).neg();  // [B]

  // the beta each (t, u, d) leaves to: by the blank (t + 1, u), or 0 past a
  // sequence's last blank; by its target label (t, u + 1); else none (-inf)
  at::Tensor ninf = at::scalar_tensor(kNegInf, lf.options());
  at::Tensor zero = at::scalar_tensor(0.0, lf.options());
  at::Tensor by_blank = at::where(r.end, zero, Bt.slice(1, 1, r.T + 1).slice(2, 0, r.U1));
  at::Tensor by_label = Bt.slice(1, 0, r.T).slice(2, 1, r.U1 + 1);
  at::Tensor d = range_on(r.D, logits.device()).view({1, 1, 1, r.D});
  at::Tensor is_blank = d.eq(blank).logical_and(r.leave_t.unsqueeze(3));
  at::Tensor is_label = d.eq(r.labels.view({r.B, 1, r.U1, 1})).logical_and(r.emits.unsqueeze(3));
  at::Tensor next = at::where(is_blank, by_blank.unsqueeze(3),
                              at::where(is_label, by_label.unsqueeze(3), ninf));
  at::Tensor c = cost.view({r.B, 1, 1, 1});
  at::Tensor grad;
  if (fused) {
    at::Tensor g = lf + (alpha + cost.view({r.B, 1, 1}) - denom).unsqueeze(3);
    grad = (g + beta.unsqueeze(3)).exp_().sub_((g + next).exp_());
  } else {
    grad = (c + lf).add_(alpha.unsqueeze(3)).add_(next).exp_().neg_();
  }
  if (clamp > 0)
    grad = grad.clamp(-clamp, clamp);
  grad = at::where(r.valid.unsqueeze(3), grad, zero).to(logits.scalar_type());
  return {cost.to(logits.scalar_type()), grad};
}

// torchaudio::rnnt_loss(Tensor logits, Tensor targets, Tensor logit_lengths,
// Tensor target_lengths, int blank, float clamp, bool fused_log_softmax)
// -> (Tensor, Tensor?), as a boxed kernel.
bool schema_is_known(const c10::FunctionSchema& s) {
  const auto& a = s.arguments();
  if (a.size() != 7 || s.returns().size() != 2)
    return false;
  for (size_t i = 0; i < 4; i++)
    if (a[i].type()->kind() != c10::TypeKind::TensorType)
      return false;
  return a[4].type()->kind() == c10::TypeKind::IntType &&
         a[5].type()->kind() == c10::TypeKind::FloatType &&
         a[6].type()->kind() == c10::TypeKind::BoolType;
}

void rnnt_loss_boxed(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  if (!schema_is_known(op.schema())) {
    run_on_cpu("torchaudio::rnnt_loss", "", stack, "has a schema the neuron kernel "
               "was not written for (another torchaudio version)");
    return;
  }
  auto args = torch::jit::last(*stack, 7);
  auto [costs, grads] = rnnt_loss(args[0].toTensor(), args[1].toTensor(), args[2].toTensor(),
                                  args[3].toTensor(), args[4].toInt(), args[5].toDouble(),
                                  args[6].toBool());
  torch::jit::drop(*stack, 7);
  torch::jit::push(*stack, std::move(costs), std::move(grads));
}

}  // namespace

TORCH_LIBRARY_IMPL(torchaudio, PrivateUse1, m) {
  m.impl("rnnt_loss", torch::CppFunction::makeFromBoxedFunction<&rnnt_loss_boxed>());
}

}  // namespace torch_neuron
