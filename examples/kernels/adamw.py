# SPDX-License-Identifier: MIT
"""A fused AdamW step over a list of parameters: one kernel updates every
parameter and both moment buffers in place (torch.optim.AdamW's
arithmetic, decoupled weight decay).

The step count lives on the card (a float32 tensor the kernel increments),
and the bias corrections are computed from it there: the kernel's
constants (lr, betas, eps, weight decay) do not change from step to step,
so one compiled kernel serves the whole training, as a capturable
optimizer's step does.

    python3 examples/kernels/adamw.py
"""
import torch

import torch_neuron.kernels as nk


@nk.kernel
def adamw_step(params, grads, exp_avgs, exp_avg_sqs, step, lr: float, beta1: float,
               beta2: float, eps: float, weight_decay: float):
    nk.add(step, 1.0, out=step)
    bc1 = 1.0 - nk.pow(beta1, step)                        # 1 - beta1^t, on the card
    bc2_sqrt = nk.sqrt(1.0 - nk.pow(beta2, step))
    step_size = nk.div(lr, bc1)                             # lr / (1 - beta1^t)
    for p, g, m, v in zip(params, grads, exp_avgs, exp_avg_sqs):
        nk.mul(p, 1.0 - lr * weight_decay, out=p)
        nk.add(nk.mul(m, beta1), g, 1.0 - beta1, out=m)    # m = b1 m + (1 - b1) g
        nk.add(nk.mul(v, beta2), nk.square(g), 1.0 - beta2, out=v)
        denom = nk.sqrt(v) / bc2_sqrt + eps
        nk.sub(p, m / denom * step_size, out=p)


@nk.op("examples::adamw_", mutates_args=("params", "exp_avgs", "exp_avg_sqs", "step"))
def adamw_op(params: list[torch.Tensor], grads: list[torch.Tensor],
             exp_avgs: list[torch.Tensor], exp_avg_sqs: list[torch.Tensor],
             step: torch.Tensor, lr: float, beta1: float, beta2: float, eps: float,
             weight_decay: float) -> None:
    adamw_step(params, grads, exp_avgs, exp_avg_sqs, step, lr, beta1, beta2, eps,
               weight_decay)


class FusedAdamW(torch.optim.Optimizer):
    """torch.optim.AdamW's update (no amsgrad, no maximize), one kernel per
    parameter group and step."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            ps = [p for p in group["params"] if p.grad is not None]
            if not ps:
                continue
            for p in ps:
                st = self.state[p]
                if not st:
                    st["exp_avg"] = torch.zeros_like(p)
                    st["exp_avg_sq"] = torch.zeros_like(p)
            if "step" not in group:
                group["step"] = torch.zeros((), device=ps[0].device)
            b1, b2 = group["betas"]
            adamw_op(ps, [p.grad for p in ps], [self.state[p]["exp_avg"] for p in ps],
                     [self.state[p]["exp_avg_sq"] for p in ps], group["step"],
                     group["lr"], b1, b2, group["eps"], group["weight_decay"])
        return loss


if __name__ == "__main__":
    torch.manual_seed(0)
    ps = [torch.randn(n, device="neuron", requires_grad=True) for n in (10, 100, 7)]
    ref = [p.detach().clone().requires_grad_() for p in ps]
    opt, ropt = FusedAdamW(ps, lr=1e-2), torch.optim.AdamW(ref, lr=1e-2, foreach=False)
    for _ in range(5):
        for group in (ps, ref):
            for p in group:
                p.grad = torch.sin(p.detach() * 3)
        opt.step()
        ropt.step()
    print("max parameter difference after 5 steps",
          max((a - b).abs().max().item() for a, b in zip(ps, ref)))
