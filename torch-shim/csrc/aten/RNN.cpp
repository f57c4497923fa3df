// SPDX-License-Identifier: MIT
// The fused recurrent cells PyTorch's LSTM/GRU (and LSTMCell/GRUCell) call
// on every device but the CPU: the gate nonlinearities and the state update
// after the two matrix products, and their backward. Composed from ATen
// operators that dispatch to the card's kernels (the host does no math).
//
// Workspaces (what forward saves for backward; only these two agree on it):
//   LSTM [B, 4H]: the activated gates i, f, g, o (sigmoid, sigmoid, tanh,
//                 sigmoid), in PyTorch's gate order.
//   GRU  [B, 5H]: r, z (sigmoid), n (tanh), the hidden part of n's
//                 pre-activation (hidden_gates_n + hidden_bias_n), and hx.
#include "NeuronOps.h"

namespace torch_neuron {
namespace {

void check_cell(const char* op, const at::Tensor& ig, const at::Tensor& hg,
                const at::Tensor& state, int64_t gates) {
  TORCH_CHECK(ig.sizes() == hg.sizes(), op, ": input_gates ", ig.sizes(),
              " and hidden_gates ", hg.sizes(), " differ in shape");
  TORCH_CHECK(ig.dim() == 2 && state.dim() == 2 && ig.size(0) == state.size(0) &&
              ig.size(1) == gates * state.size(1), op, ": expected gates of shape "
              "[B, ", gates, "*H] and a state of shape [B, H], got ", ig.sizes(),
              " and ", state.sizes());
  TORCH_CHECK(at::isFloatingType(ig.scalar_type()), op, ": expected floating "
              "point gates, got ", ig.scalar_type());
  check_device(ig, hg);
  check_device(ig, state);
  TORCH_CHECK(is_neuron(hg) && is_neuron(state), op, ": expected all tensors on ",
              ig.device());
}

// input_gates + hidden_gates (+ both biases), one [B, k*H] tensor.
at::Tensor gate_sum(const at::Tensor& ig, const at::Tensor& hg,
                    const std::optional<at::Tensor>& ib,
                    const std::optional<at::Tensor>& hb) {
  at::Tensor g = ig + hg;
  if (ib && ib->defined())
    g.add_(*ib);
  if (hb && hb->defined())
    g.add_(*hb);
  return g;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> lstm_cell(
    const at::Tensor& input_gates, const at::Tensor& hidden_gates, const at::Tensor& cx,
    const std::optional<at::Tensor>& input_bias,
    const std::optional<at::Tensor>& hidden_bias) {
  check_cell("_thnn_fused_lstm_cell", input_gates, hidden_gates, cx, 4);
  int64_t H = cx.size(1);
  at::Tensor pre = gate_sum(input_gates, hidden_gates, input_bias, hidden_bias);
  at::Tensor ws = at::empty_like(pre, at::MemoryFormat::Contiguous);
  // i, f and o through sigmoid, g through tanh, straight into the workspace.
  at::Tensor i = ws.narrow(1, 0, H), f = ws.narrow(1, H, H);
  at::Tensor g = ws.narrow(1, 2 * H, H), o = ws.narrow(1, 3 * H, H);
  at::Tensor ifg = ws.narrow(1, 0, 2 * H);
  at::sigmoid_out(ifg, pre.narrow(1, 0, 2 * H));
  at::tanh_out(g, pre.narrow(1, 2 * H, H));
  at::sigmoid_out(o, pre.narrow(1, 3 * H, H));
  at::Tensor cy = f * cx;
  cy.add_(i * g);
  at::Tensor hy = o * cy.tanh();
  return {hy, cy, ws};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> lstm_cell_backward_impl(
    const std::optional<at::Tensor>& grad_hy, const std::optional<at::Tensor>& grad_cy,
    const at::Tensor& cx, const at::Tensor& cy, const at::Tensor& workspace,
    bool has_bias) {
  bool has_h = grad_hy && grad_hy->defined(), has_c = grad_cy && grad_cy->defined();
  if (!has_h && !has_c)
    return {at::Tensor(), at::Tensor(), at::Tensor()};
  int64_t H = cx.size(1);
  TORCH_CHECK(workspace.dim() == 2 && workspace.size(1) == 4 * H &&
              workspace.size(0) == cx.size(0), "_thnn_fused_lstm_cell_backward: "
              "workspace of shape ", workspace.sizes(), " is not [B, 4H] for a cell "
              "state of shape ", cx.sizes());
  at::Tensor i = workspace.narrow(1, 0, H), f = workspace.narrow(1, H, H);
  at::Tensor g = workspace.narrow(1, 2 * H, H), o = workspace.narrow(1, 3 * H, H);
  at::Tensor tcy = cy.tanh();
  // dL/dcy: the direct gradient plus the path through hy = o * tanh(cy).
  at::Tensor gcy = has_c ? grad_cy->clone() : at::zeros_like(cy);
  if (has_h)
    gcy.add_(*grad_hy * o * (1 - tcy * tcy));
  at::Tensor grad_gates = at::empty_like(workspace, at::MemoryFormat::Contiguous);
  at::Tensor gi = grad_gates.narrow(1, 0, H), gf = grad_gates.narrow(1, H, H);
  at::Tensor gg = grad_gates.narrow(1, 2 * H, H), go = grad_gates.narrow(1, 3 * H, H);
  at::mul_out(gi, gcy * g, i * (1 - i));
  at::mul_out(gf, gcy * cx, f * (1 - f));
  at::mul_out(gg, gcy * i, 1 - g * g);
  if (has_h)
    at::mul_out(go, *grad_hy * tcy, o * (1 - o));
  else
    go.zero_();
  at::Tensor grad_cx = gcy * f;
  at::Tensor grad_bias = has_bias ? grad_gates.sum(0) : at::Tensor();
  return {grad_gates, grad_cx, grad_bias};
}

std::tuple<at::Tensor, at::Tensor> gru_cell(
    const at::Tensor& input_gates, const at::Tensor& hidden_gates, const at::Tensor& hx,
    const std::optional<at::Tensor>& input_bias,
    const std::optional<at::Tensor>& hidden_bias) {
  check_cell("_thnn_fused_gru_cell", input_gates, hidden_gates, hx, 3);
  int64_t H = hx.size(1);
  at::Tensor ig = input_gates, hg = hidden_gates;
  if (input_bias && input_bias->defined())
    ig = ig + *input_bias;
  if (hidden_bias && hidden_bias->defined())
    hg = hg + *hidden_bias;
  at::Tensor ws = empty_neuron({hx.size(0), 5 * H}, ig.scalar_type(), hx.device());
  at::Tensor r = ws.narrow(1, 0, H), z = ws.narrow(1, H, H), n = ws.narrow(1, 2 * H, H);
  // r and z: sigmoid of the sums of the first two gate pairs.
  at::Tensor rz = ws.narrow(1, 0, 2 * H);
  at::sigmoid_out(rz, ig.narrow(1, 0, 2 * H) + hg.narrow(1, 0, 2 * H));
  ws.narrow(1, 3 * H, H).copy_(hg.narrow(1, 2 * H, H));
  ws.narrow(1, 4 * H, H).copy_(hx);
  at::tanh_out(n, ig.narrow(1, 2 * H, H) + r * hg.narrow(1, 2 * H, H));
  // hy = (hx - n) * z + n, in the CPU cell's order.
  at::Tensor hy = (hx - n) * z;
  hy.add_(n);
  return {hy, ws};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor> gru_cell_backward(
    const at::Tensor& grad_hy, const at::Tensor& workspace, bool has_bias) {
  TORCH_CHECK(workspace.dim() == 2 && workspace.size(1) % 5 == 0 &&
              grad_hy.dim() == 2 && workspace.size(1) == 5 * grad_hy.size(1) &&
              workspace.size(0) == grad_hy.size(0), "_thnn_fused_gru_cell_backward: "
              "workspace of shape ", workspace.sizes(), " is not [B, 5H] for a "
              "gradient of shape ", grad_hy.sizes());
  int64_t H = grad_hy.size(1);
  at::Tensor r = workspace.narrow(1, 0, H), z = workspace.narrow(1, H, H);
  at::Tensor n = workspace.narrow(1, 2 * H, H), hn = workspace.narrow(1, 3 * H, H);
  at::Tensor hx = workspace.narrow(1, 4 * H, H);
  at::Tensor gn = grad_hy * (1 - z) * (1 - n * n);  // through n's tanh
  at::Tensor gz = grad_hy * (hx - n) * z * (1 - z);
  at::Tensor gr = gn * hn * r * (1 - r);
  at::Tensor grad_ig = at::cat({gr, gz, gn}, 1);
  at::Tensor grad_hg = at::cat({gr, gz, gn * r}, 1);
  at::Tensor grad_hx = grad_hy * z;
  at::Tensor gib, ghb;
  if (has_bias) {
    gib = grad_ig.sum(0);
    ghb = grad_hg.sum(0);
  }
  return {grad_ig, grad_hg, grad_hx, gib, ghb};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_thnn_fused_lstm_cell", lstm_cell);
  m.impl("_thnn_fused_lstm_cell_backward_impl", lstm_cell_backward_impl);
  m.impl("_thnn_fused_gru_cell", gru_cell);
  m.impl("_thnn_fused_gru_cell_backward", gru_cell_backward);
}

}  // namespace torch_neuron
