# Times and profiles training steps of GPT-2 124M (batch 16 x 1024) or of a Llama-style 953M model
# (16 x 2048, 16 heads, SwiGLU 5632, HF-style RMSNorm and rotate_half RoPE as plain torch ops, no
# biases, vocab 32000; batch 4 x 2048), random token ids, on one GPU, and prints where the step time
# goes, per kernel class and per kernel. Needs PyTorch with CUDA.
#   python3 bench/torch/profile_gpt2_step.py compile eager-bf16 autocast llama:autocast
# (writes $OUT/profile.txt; a "llama:" prefix picks the Llama-style model).
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

class RMSNorm(nn.Module):
    def __init__(s, d):
        super().__init__(); s.weight = nn.Parameter(torch.ones(d))
    def forward(s, x):
        dt = x.dtype; x = x.float()
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
        return s.weight * x.to(dt)

def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)

class LlamaBlock(nn.Module):
    def __init__(s, d=2048, h=16, f=5632):
        super().__init__(); s.h = h
        s.n1 = RMSNorm(d); s.q = nn.Linear(d, d, bias=False); s.k = nn.Linear(d, d, bias=False)
        s.v = nn.Linear(d, d, bias=False); s.o = nn.Linear(d, d, bias=False); s.n2 = RMSNorm(d)
        s.gate = nn.Linear(d, f, bias=False); s.up = nn.Linear(d, f, bias=False); s.down = nn.Linear(f, d, bias=False)
    def forward(s, x, cos, sin):
        B, T, C = x.shape
        y = s.n1(x)
        q, k, v = [p(y).view(B, T, s.h, C // s.h).transpose(1, 2) for p in (s.q, s.k, s.v)]
        cos, sin = cos.to(q.dtype), sin.to(q.dtype)  # as Hugging Face: the tables in the activations' dtype
        q = q * cos + rotate_half(q) * sin; k = k * cos + rotate_half(k) * sin
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).contiguous().view(B, T, C)
        x = x + s.o(a)
        y = s.n2(x)
        return x + s.down(F.silu(s.gate(y)) * s.up(y))

class Llama(nn.Module):
    def __init__(s, V=32000, T=2048, d=2048, L=16, h=16):
        super().__init__()
        s.emb = nn.Embedding(V, d); s.blocks = nn.ModuleList([LlamaBlock(d, h) for _ in range(L)])
        s.norm = RMSNorm(d); s.head = nn.Linear(d, V, bias=False)
        inv = 1.0 / (10000 ** (torch.arange(0, d // h, 2).float() / (d // h)))
        fr = torch.outer(torch.arange(T).float(), inv); e = torch.cat((fr, fr), dim=-1)
        s.register_buffer("cos", e.cos()[None, None], persistent=False)
        s.register_buffer("sin", e.sin()[None, None], persistent=False)
    def forward(s, idx, tgt):
        x = s.emb(idx)
        cos, sin = s.cos.to(x.dtype), s.sin.to(x.dtype)
        for b in s.blocks: x = b(x, cos, sin)
        logits = s.head(s.norm(x))
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

def run(arg, steps=30):
    llama = arg.startswith("llama:")
    mode = arg.split(":", 1)[1] if llama else arg
    torch.manual_seed(0)
    m = (Llama() if llama else GPT()).cuda()
    if mode == "eager-bf16": m = m.to(torch.bfloat16)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-4, fused=True)
    fwd = torch.compile(m) if mode == "compile" else m
    shape, vocab = ((4, 2048), 32000) if llama else ((16, 1024), 50257)
    idx = torch.randint(0, vocab, shape, device="cuda"); tgt = torch.randint(0, vocab, shape, device="cuda")
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
    log(f"== {arg}: {dt*1e3:.2f} ms/step, {shape[0]*shape[1]/dt/1e3:.1f}k tok/s, SM clock {clk:.0f} MHz, {pw:.0f} W ({len(samples)} samples)")
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
