# Times and profiles GPT-2 124M training steps (batch 16 x 1024, random token ids) on one GPU and
# prints where the step time goes, per kernel class and per kernel. Needs PyTorch with CUDA.
#   python3 bench/torch/profile_gpt2_step.py compile eager-bf16 autocast    (writes $OUT/profile.txt)
# compile: fp32 parameters, bf16 autocast, torch.compile of the model with the loss inside it;
# eager-bf16: the model in bf16, no autocast; autocast: fp32 parameters, bf16 autocast, eager.
# All use fused AdamW. The timed loop samples nvidia-smi every 200 ms (power.draw lags by ~1 s, so
# short loops under-read the power). Output of one run: measurements/traces/.
import os, sys, time, subprocess, collections
import torch, torch.nn as nn, torch.nn.functional as F
from torch.profiler import profile, ProfilerActivity

out = open(os.path.join(os.environ.get("OUT", "."), "profile.txt"), "a")
def log(*a):
    s = " ".join(str(x) for x in a); print(s); out.write(s + "\n"); out.flush()

class Block(nn.Module):
    def __init__(s, d=768, h=12):
        super().__init__(); s.h = h
        s.ln1 = nn.LayerNorm(d); s.c_attn = nn.Linear(d, 3 * d); s.c_proj = nn.Linear(d, d)
        s.ln2 = nn.LayerNorm(d); s.c_fc = nn.Linear(d, 4 * d); s.c_fc2 = nn.Linear(4 * d, d)
    def forward(s, x):
        B, T, C = x.shape
        q, k, v = s.c_attn(s.ln1(x)).split(C, dim=2)
        q, k, v = [t.view(B, T, s.h, C // s.h).transpose(1, 2) for t in (q, k, v)]
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).contiguous().view(B, T, C)
        x = x + s.c_proj(y)
        return x + s.c_fc2(F.gelu(s.c_fc(s.ln2(x)), approximate="tanh"))

class GPT(nn.Module):
    def __init__(s, V=50304, T=1024, d=768, L=12):
        super().__init__()
        s.wte = nn.Embedding(V, d); s.wpe = nn.Embedding(T, d)
        s.blocks = nn.ModuleList([Block(d) for _ in range(L)]); s.ln_f = nn.LayerNorm(d)
        s.head = nn.Linear(d, V, bias=False); s.head.weight = s.wte.weight
    def forward(s, idx, tgt):
        x = s.wte(idx) + s.wpe(torch.arange(idx.shape[1], device=idx.device))
        for b in s.blocks: x = b(x)
        logits = s.head(s.ln_f(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), tgt.view(-1))

def kind(name):
    n = name.lower()
    if "flash" in n or "fmha" in n or "attention" in n: return "attention"
    if "gemm" in n or "xmma" in n or "cutlass" in n or "nvjet" in n or "sm90" in n or "sm80" in n: return "gemm"
    if "multi_tensor" in n or "adam" in n: return "optimizer"
    if "triton" in n: return "triton"
    if "nccl" in n: return "nccl"
    if "reduce" in n: return "reduce"
    if "elementwise" in n or "vectorized" in n or "unrolled" in n: return "elementwise"
    return "other"

def run(mode, steps=30):
    torch.manual_seed(0)
    m = GPT().cuda()
    if mode == "eager-bf16": m = m.to(torch.bfloat16)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-4, fused=True)
    fwd = torch.compile(m) if mode == "compile" else m
    idx = torch.randint(0, 50257, (16, 1024), device="cuda"); tgt = torch.randint(0, 50257, (16, 1024), device="cuda")
    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=(mode != "eager-bf16")):
            loss = fwd(idx, tgt)
        loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
    for _ in range(15): step()
    torch.cuda.synchronize()
    smi = subprocess.Popen(["nvidia-smi", "--query-gpu=clocks.sm,power.draw", "--format=csv,noheader,nounits", "-lms", "200"], stdout=subprocess.PIPE, text=True)
    t0 = time.time()
    for _ in range(steps): step()
    torch.cuda.synchronize(); dt = (time.time() - t0) / steps
    smi.terminate(); samples = [l.split(",") for l in smi.communicate()[0].strip().splitlines() if "," in l]
    clk = sum(float(a) for a, b in samples) / max(1, len(samples)); pw = sum(float(b) for a, b in samples) / max(1, len(samples))
    log(f"== {mode}: {dt*1e3:.2f} ms/step, {16*1024/dt/1e3:.1f}k tok/s, SM clock {clk:.0f} MHz, {pw:.0f} W ({len(samples)} samples)")
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        for _ in range(5): step()
        torch.cuda.synchronize()
    per = collections.defaultdict(lambda: [0.0, 0])
    names = collections.defaultdict(lambda: [0.0, 0])
    for e in p.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            t = e.device_time_total if hasattr(e, "device_time_total") else e.cuda_time_total
            per[kind(e.name)][0] += t / 5; per[kind(e.name)][1] += 1 / 5
            names[e.name[:110]][0] += t / 5; names[e.name[:110]][1] += 1 / 5
    tot = sum(v[0] for v in per.values())
    log(f"   kernel time {tot/1e3:.2f} ms/step of {dt*1e3:.2f} ms wall ({tot/1e3/dt/1e3*100:.0f} % busy)")
    for k, (t, c) in sorted(per.items(), key=lambda x: -x[1][0]):
        log(f"   {k:12s} {t/1e3:7.2f} ms  {c:6.0f} kernels")
    for n, (t, c) in sorted(names.items(), key=lambda x: -x[1][0])[:28]:
        log(f"     {t/1e3:7.3f} ms {c:5.0f}x  {n}")

log(torch.__version__, torch.cuda.get_device_name())
for mode in sys.argv[1:]:
    run(mode)
