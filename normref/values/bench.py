"""Values and the table of the performance page: numbers from the committed benchmark run
(normref/results/bench-cpu.json) and pass counts computed by normref.bench.

Time-based numbers are read from the JSON, never measured at build time; the
pass counts are computed on the spot (tiny tensors, no timing).
"""

from __future__ import annotations

import functools

from . import Column, Table, count, fmt, register, register_tables
from .. import cache
from ..results import bench_cpu, row, small_cpu
from ..labels import labels

# The cached experiments this module reads (normref.experiments.declared): a build runs each once, first.
EXPERIMENTS = (
    'normref.values.bench:_pass_counts()',
)


t = labels(__name__)  # the Chinese is in normref/labels.yml

D = 4096  # the shape the budgets and the prose use: 4096 rows × 4096


def _result(family: str, norm: str, mode: str = "forward", d: int = D, dtype: str = "float32") -> dict:
    """One row of the committed run."""
    return row(bench_cpu(), family=family, norm=norm, d=d, mode=mode, dtype=dtype)


def _ms(r: dict) -> str:
    return fmt(r["time_s"]["median"] * 1e3, 1)


def _share_of_copy(r: dict) -> str:
    return f"{r['copy_fraction'] * 100:.0f}%"


def _median(family: str, norm: str, mode: str = "forward", d: int = D) -> float:
    return _result(family, norm, mode, d)["time_s"]["median"]


def machine_text(m: dict, lang: str) -> str:
    """A results file's machine block, as the page names it."""
    return t(lang, "{{cpu}} ({{cores}} cores), {{threads}} threads, torch {{torch}}, {{date}}", cpu=m["cpu_model"],
             cores=m["cpu_cores"], threads=m["torch_threads"], torch=m["torch"], date=m["date"][:10])


def _load_average() -> str:
    """The machine's 1-minute load average during the run (other jobs share its cores)."""
    m = bench_cpu()["machine"]
    la = m.get("load_average") or m.get("load_average_at_end")
    return fmt(la[0], 1)


def _rms_over_ln_range(family: str) -> str:
    """RMSNorm time / LayerNorm time over every d of the run (forward, float32, CPU)."""
    rs = [r["rms_over_ln"] for r in bench_cpu()["ratios"]
          if r["family"] == family and r["device"] == "cpu" and r["dtype"] == "float32" and r["mode"] == "forward"]
    return f"{fmt(min(rs), 2)}–{fmt(max(rs), 2)}"


def _first_compile_s() -> str:
    """The one-off compile: the first call of the compiled RMSNorm on the run's first shape."""
    rs = [r for r in bench_cpu()["results"] if r["family"] == "compiled" and r["norm"] == "rms"
          and r["dtype"] == "float32" and r["mode"] == "forward" and r["device"] == "cpu"]
    return f"{min(rs, key=lambda r: r['d'])['first_call_s']:.0f}"


def _dims() -> str:
    ds = sorted({r["d"] for r in bench_cpu()["results"]})
    return f"{count(int(ds[0]))}–{count(int(ds[-1]))}"


def _block_mib() -> str:
    from ..nn import BLOCK_BYTES

    return f"{BLOCK_BYTES / 2**20:g} MiB"


@functools.lru_cache(maxsize=None)
def _passes():
    return _pass_counts()


@cache.memo
def _pass_counts():
    # Counting them imports torch's dispatch machinery (seconds): once, not on every build.
    from ..bench import pass_counts

    return pass_counts()


def _passes_values(family: str, norm: str) -> dict:
    return {
        f"bench.passes.{family}.{norm}": lambda: str(_passes()[(family, norm)]["passes"]),
        # The best an implementation with this many passes can do: 2 passes (a copy) / its passes.
        f"bench.pass_ceiling.{family}.{norm}": lambda: f"{200 / _passes()[(family, norm)]['passes']:.0f}%",
    }


# ---- small tensors (results/small-cpu.json)


def _small_row(d: int, rows: int) -> dict:
    for scan in small_cpu()["scans"]:
        for r in scan["sizes"]:
            if (r["d"], r["rows"]) == (d, rows):
                return r
    raise KeyError(f"no small-tensor result for {rows} x {d}")


def _mib(v: float) -> str:
    return f"{v:g} MiB" if v >= 1 else f"{v * 1024:g} KiB"


def _small_limit() -> str:
    from ..nn import SMALL_BYTES

    return _mib(SMALL_BYTES / 2**20)


def _crossover(lang: str) -> str:
    """Between which measured sizes the blocked forward starts to beat torch.nn.RMSNorm (for good), over all d."""
    lo, hi = 0.0, 0.0
    for scan in small_cpu()["scans"]:
        sizes = scan["sizes"]
        first = next(i for i in range(len(sizes)) if all(s["torch_over_blocked"] > 1 for s in sizes[i:]))
        if first == 0:
            raise ValueError(f"small-cpu.json, d = {sizes[0]['d']}: the blocked forward wins at every size; no crossover")
        lo, hi = max(lo, sizes[first - 1]["mib"]), max(hi, sizes[first]["mib"])
    return t(lang, "between {{lo}} and {{hi}}", lo=_mib(lo), hi=_mib(hi))


register({
    "bench.machine": lambda lang: machine_text(bench_cpu()["machine"], lang),
    "bench.load": _load_average,
    "bench.cores": lambda: str(bench_cpu()["machine"]["cpu_cores"]),
    "bench.shape": lambda: f"{_result('copy', 'copy')['rows']} × {_result('copy', 'copy')['d']}",
    "bench.total_mib": lambda: f"{_result('copy', 'copy')['n_elements'] * _result('copy', 'copy')['itemsize'] / 2**20:.0f} MiB",
    "bench.copy_gbps": lambda: fmt(_result("copy", "copy")["gbps"], 1),
    "bench.copy_ms": lambda: _ms(_result("copy", "copy")),
    "bench.dims": _dims,
    "bench.block_mib": _block_mib,
    # share of the copy's bandwidth at d = D, forward
    **{f"bench.pct.{fam}.{norm}": (lambda fam=fam, norm=norm: _share_of_copy(_result(fam, norm)))
       for fam, norm in (("functional", "rms"), ("functional", "ln"), ("compiled", "rms"), ("compiled", "ln"),
                         ("normref", "rms"))},
    # RMSNorm time / LayerNorm time at d = D, and its range over every d of the run
    **{f"bench.ratio.{fam}": (lambda fam=fam: fmt(_median(fam, "rms") / _median(fam, "ln"), 2))
       for fam in ("composed", "functional")},
    **{f"bench.ratio_range.{fam}": (lambda fam=fam: _rms_over_ln_range(fam)) for fam in ("composed", "functional")},
    "bench.speedup.normref_vs_module": lambda: fmt(_median("module", "rms") / _median("normref", "rms"), 1),
    "bench.fb_speedup.normref_vs_module": lambda: fmt(_median("module", "rms", "forward+backward")
                                                      / _median("normref", "rms", "forward+backward"), 1),
    "bench.compile_s": _first_compile_s,
    # starting the compiler: compiling and running a trivial function, before any norm
    "bench.compile_probe_s": lambda: f"{bench_cpu()['compile_probe_s']['cpu']:.0f}",
    **_passes_values("composed", "rms"),
    **_passes_values("composed", "ln"),
    **_passes_values("functional", "rms"),
    **_passes_values("functional", "ln"),
    # small tensors
    "bench.small_limit": _small_limit,
    "bench.small.machine": lambda lang: machine_text(small_cpu()["machine"], lang),
    "bench.small.d": lambda: str(_small_row(D, 1)["d"]),  # the hidden size of the one-row figures (the budgets' d)
    # one row of d = 4096 (a decode step): the blocked forward's time ÷ torch.nn.RMSNorm's
    "bench.small.blocked_over_torch": lambda: fmt(1 / _small_row(D, 1)["torch_over_blocked"], 1),
    # the same row through normref as it dispatches (F.rms_norm plus the finiteness check)
    "bench.small.normref_over_torch": lambda: fmt(1 / _small_row(D, 1)["torch_over_normref"], 1),
    "bench.small.crossover": _crossover,
})


def _implementations(lang: str) -> Table:
    """Every implementation at d = D: forward and forward + backward times, and their share of the copy."""
    from ..bench import FAMILIES, impl_name

    cols = (Column(t(lang, "implementation"), "left", code=True), Column(t(lang, "forward")),
            Column(t(lang, "of copy bandwidth")), Column(t(lang, "forward + backward")),
            Column(t(lang, "of copy bandwidth")))
    rows = []
    for fam in FAMILIES:
        for norm in (("copy",) if fam == "copy" else ("rms", "ln")):
            try:
                f = _result(fam, norm)
            except KeyError:
                continue
            try:
                b = _result(fam, norm, "forward+backward")
                fb = (f"{_ms(b)} ms", _share_of_copy(b))
            except KeyError:
                fb = ("—", "—")
            rows.append((impl_name(fam, norm), f"{_ms(f)} ms", _share_of_copy(f), *fb))
    return Table(cols, tuple(rows))


register_tables({"bench.implementations": _implementations})
