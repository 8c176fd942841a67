"""Where and when each committed experiment result was computed (normref/results/committed,
normref.results.committed), as the pages and the captions name it: ``committed.NAME.machine``, NAME the
experiment function's name (``warmup_runs``, ``toy_training``, ``sink``, ``layer_drop``, ``grad_paths``,
``smollm2_batch``), ``committed.NAME.cpu_s``, the CPU seconds it took there, and ``committed.warmup_runs.kernels``, the set of CPU
kernels torch ran there (torch.backends.cpu.get_cpu_capability(), named for a reader: "AVX-512", "AVX2", the portable
"DEFAULT" as "portable"), which a one-seed run's floating-point details depend on."""

from __future__ import annotations

from . import fmt, register
from ..experiments import parse
from ..labels import labels
from ..results import committed

t = labels(__name__)  # the Chinese is in normref/labels.yml


def machine_text(name: str, lang: str) -> str:
    """The machine, versions and date of the committed result of the function ``name``."""
    m = committed.entry(committed.resolve(name))["machine"]
    return t(lang, "{{cpu}} ({{cores}} cores, one thread; Python {{python}}, torch {{torch}}; {{date}})",
             cpu=m["cpu_model"], cores=m["cpu_cores"], python=m["python"], torch=m["torch"], date=m["date"][:10])


def kernels_text(name: str, lang: str) -> str:
    """The set of CPU kernels torch used for the committed result of the function ``name``, as prose names it."""
    cap = committed.entry(committed.resolve(name))["machine"]["cpu_capability"]
    return {"AVX512": "AVX-512", "DEFAULT": t(lang, "portable")}.get(cap, cap)


def caption_fields(name: str) -> dict:
    """The fields of the captions' phrase committed_run (normref/figures/figures.yml) for the committed result of
    the function ``name``."""
    return {"committed_zh": machine_text(name, "zh"), "committed_en": machine_text(name, "en"), "committed_name": name}


register({
    **{f"committed.{parse(s)[1]}.machine": (lambda lang, n=parse(s)[1]: machine_text(n, lang)) for s in committed.specs()},
    **{f"committed.{parse(s)[1]}.cpu_s": (lambda n=parse(s)[1]: fmt(committed.entry(committed.resolve(n))["cpu_s"], 0))
       for s in committed.specs()},
    # The kernels only where a page names them: the toll-booth page's one-seed runs, whose gap depends on them.
    "committed.warmup_runs.kernels": lambda lang: kernels_text("warmup_runs", lang),
})
