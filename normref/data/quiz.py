"""The interview page's multiple-choice quiz: one source for the static page and a widget.

Each question has a prompt, options, the index of the correct option and an
explanation, in Chinese and English. ``render_markdown(lang)`` writes the quiz
into the page (options visible, answer in a collapsed ``??? question`` block,
so it works without JavaScript); ``@dataset("quiz")`` gives a widget the same
questions as JSON, to check a chosen answer in place.
"""

from __future__ import annotations

import html
import math

from . import dataset

LANGS = ("zh", "en")

QUIZ = [
    {
        "id": "what-rmsnorm-drops",
        "prompt": {"zh": "和 LayerNorm 相比，RMSNorm 少了哪些步骤？",
                   "en": "Compared with LayerNorm, which steps does RMSNorm leave out?"},
        "options": [
            {"zh": "可学习的增益 g", "en": "the learned gain g"},
            {"zh": "减去均值（中心化）和加性偏置 β", "en": "subtracting the mean (centring) and the additive bias β"},
            {"zh": "整个除法：它只做缩放，不做归一化", "en": "the whole division: it only rescales, it does not normalise"},
        ],
        "answer": 1,
        "explain": {
            "zh": "RMSNorm 仍然除以一个“长度”（均方根），也仍然保留逐特征的增益 g；它去掉的是先减均值这一步和偏置 β。"
                  "所以它失去了对“整体平移”的不变性，但保留了对“整体缩放”的不变性。",
            "en": "RMSNorm still divides by a length (the root mean square) and still keeps a per-feature gain g; what it "
                  "drops is the mean subtraction and the bias β. It therefore loses invariance to shifting the input but "
                  "keeps invariance to scaling it.",
        },
    },
    {
        "id": "why-pre-norm",
        "prompt": {"zh": "为什么 20 层以上的 Transformer 普遍采用 pre-norm（Pre-LN）？",
                   "en": "Why do Transformers deeper than about 20 layers use pre-norm (Pre-LN)?"},
        "options": [
            {"zh": "残差主线不经过归一化，梯度沿恒等路径直达浅层，深层堆叠因此仍然可训练",
             "en": "the residual main line is never normalised, so the gradient reaches early layers along an identity "
                   "path and a deep stack stays trainable"},
            {"zh": "pre-norm 比 post-norm 参数更少", "en": "pre-norm has fewer parameters than post-norm"},
            {"zh": "pre-norm 不再需要残差连接", "en": "pre-norm no longer needs residual connections"},
        ],
        "answer": 0,
        "explain": {
            "zh": "两种接法的参数一样多（Pre-LN 只多一个最终归一化），也都离不开残差连接。区别在于归一化放在哪里："
                  "Pre-LN 让 x_L = x_0 + Σ f_l(LN(x_l))，反向传播时 ∂x_L/∂x_l 里始终有一个单位矩阵 I。",
            "en": "Both layouts have the same parameters (Pre-LN adds one final norm) and both rely on residual "
                  "connections. The difference is where the norm sits: Pre-LN gives x_L = x_0 + Σ f_l(LN(x_l)), so the "
                  "backward Jacobian ∂x_L/∂x_l always contains an identity matrix I.",
        },
    },
    {
        "id": "l2-after-rmsnorm",
        "prompt": {"zh": "一个 1024 维的隐藏向量经过 RMSNorm 和可学习增益之后，L2 长度大约是多少？",
                   "en": "After RMSNorm and its learned gain, about how long (L2) is a 1024-dimensional hidden vector?"},
        "options": [
            {"zh": "约等于 1：RMSNorm 把向量变成单位长度", "en": "about 1: RMSNorm makes the vector unit length"},
            {"zh": f"约等于 √1024 = {math.isqrt(1024)}，再乘上增益的典型大小",
             "en": f"about √1024 = {math.isqrt(1024)}, times the typical size of the gain"},
            {"zh": "和输入一样长：RMSNorm 不改变长度", "en": "as long as the input: RMSNorm does not change the length"},
        ],
        "answer": 1,
        "explain": {
            "zh": "除以 RMS 之后，各分量平方的平均值是 1，d 个分量的平方和就是 d，长度是 √d。"
                  "单位长度是除以 L2 范数的结果，不是除以 RMS；两者相差 √d 倍。",
            "en": "After dividing by the RMS, the squared entries average 1, so the d of them sum to d and the length is "
                  "√d. Unit length is what dividing by the L2 norm gives, not dividing by the RMS; the two differ by √d.",
        },
    },
]

LETTERS = "ABCDEFGH"


def _check() -> None:
    """Fail loudly (at import, hence at build) if a question lacks a language or a valid answer."""
    for q in QUIZ:
        for key in ("prompt", "explain"):
            for lang in LANGS:
                if not q[key].get(lang, "").strip():
                    raise ValueError(f"quiz question {q['id']!r}: {key} missing in {lang}")
        for o in q["options"]:
            for lang in LANGS:
                if not o.get(lang, "").strip():
                    raise ValueError(f"quiz question {q['id']!r}: an option is missing in {lang}")
        if not 0 <= q["answer"] < len(q["options"]):
            raise ValueError(f"quiz question {q['id']!r}: answer index {q['answer']} out of range")


_check()


def _lang(lang: str) -> str:
    if lang not in LANGS:
        raise ValueError(f"lang must be one of {LANGS}, got {lang!r}")
    return lang


@dataset("quiz")
def quiz(lang):
    """The questions in one language: id, prompt, options, answer index, explanation."""
    lang = _lang(lang)
    return [{"id": q["id"], "prompt": q["prompt"][lang], "options": [o[lang] for o in q["options"]],
             "answer": q["answer"], "explain": q["explain"][lang]} for q in QUIZ]


def render_markdown(lang: str) -> str:
    """The quiz as page Markdown: each question in a ``div.nr-quiz``, options as a list, answer collapsed."""
    lang = _lang(lang)
    show = "看答案" if lang == "zh" else "Show the answer"
    blocks = []
    for n, q in enumerate(quiz(lang), 1):
        opts = "\n".join(f'<li data-option="{i}"><span class="nr-quiz-letter">{LETTERS[i]}.</span> {html.escape(o)}</li>'
                         for i, o in enumerate(q["options"]))
        blocks.append(
            f'<div class="nr-quiz" id="quiz-{q["id"]}" data-quiz-id="{q["id"]}" markdown>\n\n'
            f"**{n}. {q['prompt']}**\n\n"
            f'<ul class="nr-quiz-options">\n{opts}\n</ul>\n\n'
            f'??? question "{show}"\n'
            f"    **{LETTERS[q['answer']]}.** {q['explain']}\n\n"
            "</div>"
        )
    return "\n\n".join(blocks)
