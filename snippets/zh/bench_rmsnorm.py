"""在你自己的机器上花几秒钟，给 RMSNorm 和 LayerNorm 计时。

归一化是访存受限的操作，所以我们拿每种实现去和同一个张量的一次普通复制比
（``x.clone()``：读一遍、写一遍）：凡是读 x、写 y 的操作，都不可能比它更快。
各实现轮流计时，一轮接一轮，最后打印中位数。你的数字取决于你的 CPU、内存和
torch 版本；页面上的数字来自页面写明的那台机器。
"""

import statistics
import time

import torch
import torch.nn.functional as F

from normref.nn import rms_norm

torch.set_num_threads(2)
rows, d = 512, 4096
x = torch.randn(rows, d, generator=torch.Generator().manual_seed(0))
w = torch.ones(d)

impls = {
    "x.clone() (copy)": lambda: x.clone(),
    "F.layer_norm": lambda: F.layer_norm(x, (d,), w, None, 1e-6),
    "F.rms_norm": lambda: F.rms_norm(x, (d,), w, 1e-6),
    "normref rms_norm": lambda: rms_norm(x, w, 1e-6),
}
times = {name: [] for name in impls}
with torch.no_grad():
    for f in impls.values():  # 预热：头几次调用要分配内存、触发缺页
        f()
    for _ in range(15):
        for name, f in impls.items():
            t0 = time.perf_counter()
            f()
            times[name].append(time.perf_counter() - t0)

copy = statistics.median(times["x.clone() (copy)"])
print(f"{rows} x {d} float32, {torch.get_num_threads()} threads, torch {torch.__version__}")
for name, ts in times.items():
    t = statistics.median(ts)
    print(f"{name:<18} {t * 1e3:6.2f} ms  {copy / t:5.0%} of the copy's bandwidth")
