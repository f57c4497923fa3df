# SPDX-License-Identifier: MIT
"""torchaudio's speech models on the card: its RNN-T loss
(torchaudio::rnnt_loss, whose kernel torch_neuron registers) against
torchaudio's CPU kernel, and tiny wav2vec2 (weight-normed positional
convolution, CTC) and Emformer RNN-T models built by torchaudio's own
factory functions, trained a few steps on the card with no fallback
(conftest) and compared with the same steps on the CPU. Also: a library's
custom operator with no neuron kernel still falls back to the CPU loudly."""
import subprocess
import warnings

import pytest
import torch
import torch.nn.functional as F

from conftest import assert_close, python_command

torchaudio = pytest.importorskip("torchaudio")


def _rnnt_inputs(blank, fused, label_is_blank=False):
    """Logits [B=3, T=6, U+1=4, D=5] with logit lengths 6, 4, 5 and target
    lengths 3, 1, 0 (the padded labels are 0, as torchaudio documents)."""
    B, T, U, D = 3, 6, 3, 5
    logits = torch.randn(B, T, U + 1, D) * 2
    if not fused:
        logits = logits.log_softmax(-1)
    labels = [c for c in range(D) if c != blank]
    targets = torch.tensor(labels)[torch.randint(len(labels), (B, U))].int()
    target_lengths = torch.tensor([3, 1, 0], dtype=torch.int32)
    targets[1, 1:] = 0
    targets[2, :] = 0
    if label_is_blank:
        targets[0, 1] = blank
    logit_lengths = torch.tensor([6, 4, 5], dtype=torch.int32)
    return [logits, targets, logit_lengths, target_lengths]


def _on(dev, tensors):
    return [t.to(dev) for t in tensors]


# The recursions add T + U terms in log space: float32 ulps of costs around
# 10 give ~1e-6 each, and the card's logaddexp and exp round once in double
# where the CPU rounds each float step; gradients are differences of exps
# of those sums (at most 1 in magnitude).
COST_TOL = dict(rtol=1e-5, atol=1e-5)
GRAD_TOL = dict(rtol=1e-4, atol=2e-6)


@pytest.mark.parametrize("fused", [True, False])
@pytest.mark.parametrize("clamp", [-1.0, 0.05])
@pytest.mark.parametrize("blank", [0, 4])
def test_rnnt_loss_costs_and_gradients_match_cpu(fused, clamp, blank):
    args = _rnnt_inputs(blank, fused)
    want_costs, want_grads = torch.ops.torchaudio.rnnt_loss(*args, blank, clamp, fused)
    costs, grads = torch.ops.torchaudio.rnnt_loss(*_on("neuron", args), blank, clamp, fused)
    assert costs.device.type == "neuron" and grads.device.type == "neuron"
    assert_close(costs, want_costs, **COST_TOL)
    assert_close(grads, want_grads, **GRAD_TOL)
    # the padded (t, u) of each sequence: exactly 0, as on the CPU
    assert grads[1, 4:].abs().sum().item() == 0 and grads[1, :, 2:].abs().sum().item() == 0
    assert grads[2, 5:].abs().sum().item() == 0 and grads[2, :, 1:].abs().sum().item() == 0


def test_rnnt_loss_label_equal_to_blank_matches_cpu():
    """A target label equal to the blank (no real data has one) takes the
    CPU kernel's branches, which test the blank first."""
    args = _rnnt_inputs(0, True, label_is_blank=True)
    want_costs, want_grads = torch.ops.torchaudio.rnnt_loss(*args, 0, -1.0, True)
    costs, grads = torch.ops.torchaudio.rnnt_loss(*_on("neuron", args), 0, -1.0, True)
    assert_close(costs, want_costs, **COST_TOL)
    assert_close(grads, want_grads, **GRAD_TOL)


def test_rnnt_loss_float16_matches_cpu():
    args = _rnnt_inputs(4, True)
    args[0] = args[0].half()
    want_costs, want_grads = torch.ops.torchaudio.rnnt_loss(*args, 4, -1.0, True)
    costs, grads = torch.ops.torchaudio.rnnt_loss(*_on("neuron", args), 4, -1.0, True)
    assert costs.dtype == grads.dtype == torch.float16
    # one float16 rounding of each result apart
    assert_close(costs, want_costs, rtol=1e-3, atol=1e-3)
    assert_close(grads, want_grads, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_rnnt_loss_autograd_matches_cpu(reduction):
    """torchaudio.functional.rnnt_loss's backward: torchaudio's own autograd
    kernel scales the gradients the card computed in the forward."""
    logits, *rest = _rnnt_inputs(4, True)
    x = logits.clone().requires_grad_()
    nx = logits.to("neuron").requires_grad_()
    want = torchaudio.functional.rnnt_loss(x, *rest, reduction=reduction, clamp=1.0)
    got = torchaudio.functional.rnnt_loss(nx, *_on("neuron", rest), reduction=reduction,
                                          clamp=1.0)
    (want * 3).backward()
    (got * 3).backward()
    assert_close(got.detach(), want.detach(), **COST_TOL)
    assert_close(nx.grad, x.grad, **GRAD_TOL)


def test_rnnt_loss_refuses_what_the_cpu_refuses():
    logits, targets, logit_lengths, target_lengths = _on("neuron", _rnnt_inputs(4, True))
    with pytest.raises(RuntimeError, match="input length mismatch"):
        torch.ops.torchaudio.rnnt_loss(logits[:, :5].contiguous(), targets, logit_lengths,
                                       target_lengths, 4, -1.0, True)
    with pytest.raises(RuntimeError, match="targets must be int32"):
        torch.ops.torchaudio.rnnt_loss(logits, targets.long(), logit_lengths,
                                       target_lengths, 4, -1.0, True)
    with pytest.raises(RuntimeError, match="blank must be within"):
        torch.ops.torchaudio.rnnt_loss(logits, targets, logit_lengths, target_lengths,
                                       5, -1.0, True)
    bad = targets.clone()
    bad[0, 0] = 7
    with pytest.raises(RuntimeError, match=r"class indices in \[0, 5\), found 7"):
        torch.ops.torchaudio.rnnt_loss(logits, bad, logit_lengths, target_lengths,
                                       4, -1.0, True)


def _clone_to(model, dev):
    import copy
    return copy.deepcopy(model).to(dev)


def _train(model, dev, step, steps=2):
    """Losses and the parameters' gradients after @steps of SGD, from a copy
    of @model on @dev; step(model, dev) returns a step's loss."""
    model = _clone_to(model, dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = step(model, dev)
        loss.backward()
        opt.step()
        losses.append(loss.detach().cpu())
    return losses, {n: p.grad.cpu() for n, p in model.named_parameters() if p.grad is not None}


# The card's matrix products and reductions sum in another order than the
# CPU's (conftest: rtol 1e-4 an operator); through the models' layers, the
# CTC or RNN-T recursion and two SGD steps, the losses seen were within 5e-7
# relative, the gradients within 1.8e-5 absolute (wav2vec2, largest 1.6) and
# 1.1e-5 (Emformer, largest 10); near-zero gradients differ by more relative
# to themselves, hence the absolute floor.
def _compare(model, step, atol):
    want_losses, want = _train(model, "cpu", step)
    got_losses, got = _train(model, "neuron", step)
    for a, b in zip(got_losses, want_losses):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)
    assert got.keys() == want.keys() and want
    for name in want:
        torch.testing.assert_close(got[name], want[name], rtol=1e-3, atol=atol, msg=name)


def test_wav2vec2_trains_on_neuron_like_cpu():
    """A tiny wav2vec2 (torchaudio.models.wav2vec2_model): its positional
    convolution is weight-normed over the kernel dim (the last), so each
    step runs _weight_norm_interface and its backward; trained with CTC."""
    torch.manual_seed(0)
    model = torchaudio.models.wav2vec2_model(
        extractor_mode="group_norm", extractor_conv_layer_config=[(8, 10, 5), (8, 3, 2)],
        extractor_conv_bias=False, encoder_embed_dim=16, encoder_projection_dropout=0.0,
        encoder_pos_conv_kernel=4, encoder_pos_conv_groups=2, encoder_num_layers=1,
        encoder_num_heads=2, encoder_attention_dropout=0.0, encoder_ff_interm_features=32,
        encoder_ff_interm_dropout=0.0, encoder_dropout=0.0, encoder_layer_norm_first=False,
        encoder_layer_drop=0.0, aux_num_out=6)
    wave = torch.randn(2, 400)
    wave_lengths = torch.tensor([400, 320])
    targets = torch.randint(1, 6, (2, 5))
    target_lengths = torch.tensor([5, 3])

    def step(m, dev):
        emissions, lengths = m(wave.to(dev), wave_lengths.to(dev))
        lp = emissions.log_softmax(-1).transpose(0, 1)
        return F.ctc_loss(lp, targets.to(dev), lengths, target_lengths.to(dev))

    _compare(model, step, atol=1e-5)


def test_emformer_rnnt_trains_on_neuron_like_cpu():
    """A tiny Emformer RNN-T (torchaudio.models.emformer_rnnt_model), trained
    the way torchaudio's recipe does: blank-prepended targets into the
    predictor, torchaudio.transforms.RNNTLoss(reduction="sum", clamp=1.0)."""
    torch.manual_seed(0)
    num_symbols, blank = 7, 6
    model = torchaudio.models.emformer_rnnt_model(
        input_dim=8, encoding_dim=12, num_symbols=num_symbols, segment_length=4,
        right_context_length=0, time_reduction_input_dim=8, time_reduction_stride=2,
        transformer_num_heads=2, transformer_ffn_dim=16, transformer_num_layers=1,
        transformer_dropout=0.0, transformer_activation="relu",
        transformer_left_context_length=4, transformer_max_memory_size=0,
        transformer_weight_init_scale_strategy="depthwise", transformer_tanh_on_mem=False,
        symbol_embedding_dim=8, num_lstm_layers=1, lstm_layer_norm=True,
        lstm_layer_norm_epsilon=1e-5, lstm_dropout=0.0)
    loss_fn = torchaudio.transforms.RNNTLoss(blank=blank, reduction="sum", clamp=1.0)
    feats = torch.randn(2, 16, 8)
    feat_lengths = torch.tensor([16, 12], dtype=torch.int32)
    targets = torch.randint(0, blank, (2, 3), dtype=torch.int32)
    target_lengths = torch.tensor([3, 2], dtype=torch.int32)
    prepended = torch.cat([torch.full((2, 1), blank, dtype=torch.int32), targets], 1)

    def step(m, dev):
        out, src_lengths, _, _ = m(feats.to(dev), feat_lengths.to(dev), prepended.to(dev),
                                   (target_lengths + 1).to(dev))
        return loss_fn(out, targets.to(dev), src_lengths, target_lengths.to(dev))

    _compare(model, step, atol=1e-4)


# A library's custom operator with a CPU kernel only.
_lib = torch.library.Library("neuron_audio_test", "DEF")
_lib.define("twice(Tensor x) -> Tensor")
_lib.impl("twice", lambda x: x * 2, "CPU")


@pytest.mark.allow_fallback("neuron_audio_test::twice")
def test_custom_op_without_neuron_kernel_falls_back_loudly(monkeypatch, capfd):
    """Like torchaudio's operators before torch_neuron had kernels for them,
    but with no autograd kernel either (torch_neuron registers PyTorch's
    autograd fallback for its device, which PyTorch leaves to the backend)."""
    import torch_neuron
    x = torch.arange(4.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = torch.ops.neuron_audio_test.twice(x.to("neuron"))
    # the warning: a Python warning, or on stderr through c10's handler when
    # the caller installed none (torch.ops.* does not)
    said = [str(w.message) for w in caught] + [capfd.readouterr().err]
    assert any("operator neuron_audio_test::twice has no neuron kernel; it runs on the CPU"
               in m for m in said), said
    assert y.device.type == "neuron"
    assert torch.equal(y.cpu(), x * 2)
    # an input that requires grad: autograd treats it as on the CPU (the op
    # has no autograd kernel on either)
    xg = x.clone().requires_grad_()
    nxg = x.to("neuron").requires_grad_()
    assert (torch.ops.neuron_audio_test.twice(nxg).requires_grad
            == torch.ops.neuron_audio_test.twice(xg).requires_grad)
    assert torch_neuron.fallback_stats()["neuron_audio_test::twice"] == 2
    monkeypatch.setenv("TORCH_NEURON_FALLBACK", "error")
    with pytest.raises(RuntimeError, match="TORCH_NEURON_FALLBACK=error"):
        torch.ops.neuron_audio_test.twice(x.to("neuron"))


def test_backend_loads_without_torchaudio():
    """The rnnt_loss kernel is registered before anything defines the
    operator: a process that never loads torchaudio works, and has no
    torchaudio::rnnt_loss."""
    code = ("import sys; assert 'torchaudio' not in sys.modules\n"
            "import torch\n"
            "print((torch.ones(3, device='neuron') * 2).sum().item())\n"
            "try:\n"
            "    torch.ops.torchaudio.rnnt_loss\n"
            "    print('defined')\n"
            "except (AttributeError, RuntimeError):\n"
            "    print('undefined')\n"
            "assert 'torchaudio' not in sys.modules\n")
    out = subprocess.run(python_command() + ["-c", code], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["6.0", "undefined"], out.stdout
