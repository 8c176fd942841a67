"""Values of the performance page: numbers from the committed benchmark run
(normref/results/bench-cpu.json) and pass counts computed by normref.bench.

Time-based numbers are read from the JSON, never measured at build time; the
pass counts are computed on the spot (tiny tensors, no timing).
"""

from __future__ import annotations

import functools

from . import fmt, value
from ..results import bench_cpu, row, small_cpu

D = 4096  # the shape the budgets and the prose use: 4096 rows × 4096


def _r(family, norm, mode="forward", d=D, dtype="float32"):
    return row(bench_cpu(), family=family, norm=norm, d=d, mode=mode, dtype=dtype)


def _ms(r) -> str:
    return fmt(r["time_s"]["median"] * 1e3, 1)


def _pct(r) -> str:
    return f"{r['copy_fraction'] * 100:.0f}%"


@value("bench.machine")
def _machine(lang):
    return _machine_text(bench_cpu()["machine"], lang)


def _machine_text(m: dict, lang: str) -> str:
    """A results file's machine block, as the page names it."""
    if lang == "zh":
        return (f"{m['cpu_model']}（{m['cpu_cores']} 核），{m['torch_threads']} 线程，torch {m['torch']}，"
                f"{m['date'][:10]}")
    return f"{m['cpu_model']} ({m['cpu_cores']} cores), {m['torch_threads']} threads, torch {m['torch']}, {m['date'][:10]}"


@value("bench.load")
def _load(lang):
    """The machine's 1-minute load average during the run (other jobs share its cores)."""
    m = bench_cpu()["machine"]
    la = m.get("load_average") or m.get("load_average_at_end")
    return fmt(la[0], 1)


@value("bench.cores")
def _cores(lang):
    return str(bench_cpu()["machine"]["cpu_cores"])


@value("bench.shape")
def _shape(lang):
    r = _r("copy", "copy")
    return f"{r['rows']} × {r['d']}"


@value("bench.total_mib")
def _total(lang):
    r = _r("copy", "copy")
    return f"{r['n_elements'] * r['itemsize'] / 2**20:.0f} MiB"


@value("bench.copy_gbps")
def _copy_gbps(lang):
    return fmt(_r("copy", "copy")["gbps"], 1)


@value("bench.copy_ms")
def _copy_ms(lang):
    return _ms(_r("copy", "copy"))


def _register_rows():
    for fam in ("composed", "functional", "module", "compiled", "normref"):
        for norm in ("rms", "ln"):
            value(f"bench.ms.{fam}.{norm}")(lambda lang, f=fam, n=norm: _ms(_r(f, n)))
            value(f"bench.pct.{fam}.{norm}")(lambda lang, f=fam, n=norm: _pct(_r(f, n)))
            value(f"bench.fb_ms.{fam}.{norm}")(lambda lang, f=fam, n=norm: _ms(_r(f, n, "forward+backward")))
        # RMSNorm time / LayerNorm time at D, and its range over every d of the run.
        value(f"bench.ratio.{fam}")(lambda lang, f=fam: fmt(_ratio(f, D), 2))
        value(f"bench.ratio_range.{fam}")(lambda lang, f=fam: _ratio_range(f))


def _ratio(family, d, mode="forward"):
    return _r(family, "rms", mode, d)["time_s"]["median"] / _r(family, "ln", mode, d)["time_s"]["median"]


def _ratio_range(family):
    rs = [r["rms_over_ln"] for r in bench_cpu()["ratios"]
          if r["family"] == family and r["device"] == "cpu" and r["dtype"] == "float32" and r["mode"] == "forward"]
    return f"{fmt(min(rs), 2)}–{fmt(max(rs), 2)}"


_register_rows()


@value("bench.speedup.normref_vs_module")
def _speedup(lang):
    return fmt(_r("module", "rms")["time_s"]["median"] / _r("normref", "rms")["time_s"]["median"], 1)


@value("bench.fb_speedup.normref_vs_module")
def _fb_speedup(lang):
    m, n = _r("module", "rms", "forward+backward"), _r("normref", "rms", "forward+backward")
    return fmt(m["time_s"]["median"] / n["time_s"]["median"], 1)


@value("bench.compile_s")
def _compile_s(lang):
    """The one-off compile: the first call of the compiled RMSNorm on the run's first shape."""
    rs = [r for r in bench_cpu()["results"] if r["family"] == "compiled" and r["norm"] == "rms" and r["dtype"] == "float32"
          and r["mode"] == "forward" and r["device"] == "cpu"]
    first = min(rs, key=lambda r: r["d"])
    return f"{first['first_call_s']:.0f}"


@value("bench.compile_probe_s")
def _compile_probe_s(lang):
    """Starting the compiler: compiling and running a trivial function, before any norm."""
    return f"{bench_cpu()['compile_probe_s']['cpu']:.0f}"


@value("bench.dims")
def _dims(lang):
    ds = sorted({r["d"] for r in bench_cpu()["results"]})
    return f"{ds[0]}–{ds[-1]}"


@value("bench.block_mib")
def _block(lang):
    from ..nn import BLOCK_BYTES

    return f"{BLOCK_BYTES / 2**20:g} MiB"


@functools.lru_cache(maxsize=None)
def _passes():
    from ..bench import pass_counts

    return pass_counts()


for _fam in ("composed", "functional"):
    for _norm in ("rms", "ln"):
        value(f"bench.passes.{_fam}.{_norm}")(lambda lang, f=_fam, n=_norm: str(_passes()[(f, n)]["passes"]))
        # The best an implementation with this many passes can do: 2 passes (a copy) / its passes.
        value(f"bench.pass_ceiling.{_fam}.{_norm}")(
            lambda lang, f=_fam, n=_norm: f"{200 / _passes()[(f, n)]['passes']:.0f}%")


@value("bench.table")
def _table(lang):
    """The d = 4096 forward and forward+backward table, as Markdown."""
    zh = lang == "zh"
    head = ("| 实现 | 前向 | 占复制带宽 | 前向 + 反向 | 占复制带宽 |\n|---|---:|---:|---:|---:|" if zh else
            "| implementation | forward | of copy bandwidth | forward + backward | of copy bandwidth |\n"
            "|---|---:|---:|---:|---:|")
    lines = [head]
    from ..bench import FAMILIES, impl_name

    for fam in FAMILIES:
        for norm in (("copy",) if fam == "copy" else ("rms", "ln")):
            try:
                f = _r(fam, norm)
            except KeyError:
                continue
            try:
                b = _r(fam, norm, "forward+backward")
                fb = (f"{_ms(b)} ms", _pct(b))
            except KeyError:
                fb = ("—", "—")
            lines.append(f"| `{impl_name(fam, norm)}` | {_ms(f)} ms | {_pct(f)} | {fb[0]} | {fb[1]} |")
    return "\n".join(lines)


# ---------------------------------------------------------------- small tensors (results/small-cpu.json)


def _small_row(d: int, rows: int) -> dict:
    for scan in small_cpu()["scans"]:
        for r in scan["sizes"]:
            if (r["d"], r["rows"]) == (d, rows):
                return r
    raise KeyError(f"no small-tensor result for {rows} x {d}")


def _mib(v: float) -> str:
    return f"{v:g} MiB" if v >= 1 else f"{v * 1024:g} KiB"


@value("bench.small_limit")
def _small_limit(lang):
    from ..nn import SMALL_BYTES

    return _mib(SMALL_BYTES / 2**20)


@value("bench.small.machine")
def _small_machine(lang):
    return _machine_text(small_cpu()["machine"], lang)


@value("bench.small.d")
def _small_d(lang):
    """The hidden size of the one-row figures below (the budgets' d)."""
    return str(_small_row(D, 1)["d"])


@value("bench.small.blocked_over_torch")
def _small_blocked(lang):
    """One row of d = 4096 (a decode step): the blocked forward's time ÷ torch.nn.RMSNorm's."""
    return fmt(1 / _small_row(D, 1)["torch_over_blocked"], 1)


@value("bench.small.normref_over_torch")
def _small_normref(lang):
    """The same row through normref as it dispatches (F.rms_norm plus the finiteness check)."""
    return fmt(1 / _small_row(D, 1)["torch_over_normref"], 1)


@value("bench.small.crossover")
def _small_crossover(lang):
    """Between which measured sizes the blocked forward starts to beat torch.nn.RMSNorm (for good), over all d."""
    lo, hi = 0.0, 0.0
    for scan in small_cpu()["scans"]:
        sizes = scan["sizes"]
        first = next(i for i in range(len(sizes)) if all(s["torch_over_blocked"] > 1 for s in sizes[i:]))
        if first == 0:
            raise ValueError(f"small-cpu.json, d = {sizes[0]['d']}: the blocked forward wins at every size; no crossover")
        lo, hi = max(lo, sizes[first - 1]["mib"]), max(hi, sizes[first]["mib"])
    return f"{_mib(lo)} 到 {_mib(hi)} 之间" if lang == "zh" else f"between {_mib(lo)} and {_mib(hi)}"
