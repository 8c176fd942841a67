"""The Chinese lesson's model (Qwen3.5-0.8B) next to the model this site measures (SmolLM2-135M).

The Chinese lesson this site grew from works with Qwen3.5-0.8B. Its hidden size
and layer count are known only from third-party sites ([U] in REFERENCES.md),
so they are labelled unverified wherever they appear; the rest of Qwen3.5's
column is read from Hugging Face's ``modeling_qwen3_5.py`` ([V]). SmolLM2's
column is read from its GGUF file by :mod:`normref.models`.
"""

from __future__ import annotations

import math

from . import Column, Table, fmt, register, register_tables

# [U]: third-party sources only (REFERENCES.md, "The seed's model").
QWEN35_08B = {"d": 1024, "n_layer": 24}


def _smol():
    from ..experiments.models import run

    return run("smollm2-135m", "en")["model"]


register({
    "seed_model.qwen_sqrt_d": lambda: fmt(math.sqrt(QWEN35_08B["d"]), 0),
    "seed_model.qwen_n_layer": lambda: str(QWEN35_08B["n_layer"]),
    # √d of SmolLM2 over √d of Qwen3.5-0.8B: how lengths before the gain compare
    "seed_model.length_ratio": lambda: fmt(math.sqrt(_smol()["d"] / QWEN35_08B["d"]), 2),
})


def _comparison(lang: str) -> Table:
    """The two models side by side, one configuration fact a row (Qwen3.5's hidden size and depth unverified)."""
    m = _smol()
    u = "（未核实）" if lang == "zh" else " (unverified)"
    if lang == "zh":
        head = ("", "Qwen3.5-0.8B（中文课程用的模型）", "SmolLM2-135M-Instruct（本站实测）")
        rows = [
            ("隐藏维度 $d$", f"{QWEN35_08B['d']}{u}", f"{m['d']}（GGUF 元数据）"),
            ("乘增益前的 RMSNorm 输出长度 $\\sqrt{d}$", f"{fmt(math.sqrt(QWEN35_08B['d']), 0)}（由未核实的 $d$ 算出）",
             fmt(math.sqrt(m["d"]), 0)),
            ("层数", f"{QWEN35_08B['n_layer']}{u}", f"{m['n_layer']}（GGUF 元数据）"),
            ("归一化位置", "Pre-RMSNorm（HF `modeling_qwen3_5.py`）", "Pre-RMSNorm（Llama 结构）"),
            ("增益的用法", "零中心 RMSNorm：$\\hat{x}\\cdot(1 + w)$", "$\\hat{x}\\cdot g$"),
            ("QK-norm", "逐头，只在全注意力层上", "没有（GGUF 里没有 q/k 归一化张量）"),
            ("注意力层", "默认每 4 层一层全注意力，其余为 Gated DeltaNet", f"全部是全注意力（{m['n_head']} 个查询头、{m['n_kv_head']} 个键/值头）"),
        ]
    else:
        head = ("", "Qwen3.5-0.8B (the Chinese lesson's model)", "SmolLM2-135M-Instruct (measured here)")
        rows = [
            ("hidden size $d$", f"{QWEN35_08B['d']}{u}", f"{m['d']} (GGUF metadata)"),
            ("RMSNorm output length before the gain, $\\sqrt{d}$", f"{fmt(math.sqrt(QWEN35_08B['d']), 0)} (from the unverified $d$)",
             fmt(math.sqrt(m["d"]), 0)),
            ("layers", f"{QWEN35_08B['n_layer']}{u}", f"{m['n_layer']} (GGUF metadata)"),
            ("norm placement", "Pre-RMSNorm (HF `modeling_qwen3_5.py`)", "Pre-RMSNorm (Llama architecture)"),
            ("how the gain is applied", "zero-centered RMSNorm: $\\hat{x}\\cdot(1 + w)$", "$\\hat{x}\\cdot g$"),
            ("QK-norm", "per head, on the full-attention layers only", "none (no q/k norm tensor in the GGUF)"),
            ("attention layers", "by default every 4th layer is full attention, the rest Gated DeltaNet",
             f"all full attention ({m['n_head']} query heads, {m['n_kv_head']} key/value heads)"),
        ]
    return Table(tuple(Column(label, "left") for label in head), tuple(rows))


register_tables({"seed_model.comparison": _comparison})
