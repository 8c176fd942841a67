"""Where and when each committed experiment result was computed (normref/results/committed,
normref.results.committed), as the pages and the captions name it: ``committed.NAME.machine``, NAME the
experiment function's name (``warmup_runs``, ``toy_training``, ``sink``, ``layer_drop``, ``grad_paths``,
``smollm2_batch``), and ``committed.NAME.cpu_s``, the CPU seconds it took there."""

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


def caption_fields(name: str) -> dict:
    """The fields of the captions' phrase committed_run (normref/figures/figures.yml) for the committed result of
    the function ``name``."""
    return {"committed_zh": machine_text(name, "zh"), "committed_en": machine_text(name, "en"), "committed_name": name}


register({
    **{f"committed.{parse(s)[1]}.machine": (lambda lang, n=parse(s)[1]: machine_text(n, lang)) for s in committed.specs()},
    **{f"committed.{parse(s)[1]}.cpu_s": (lambda n=parse(s)[1]: fmt(committed.entry(committed.resolve(n))["cpu_s"], 0))
       for s in committed.specs()},
})
