"""A block of a Markdown file between two marker comments, as the table tools render it (perf_table, plan_table)."""

from __future__ import annotations


def block(text: str, begin: str, end: str, what: str) -> str:
    """What ``text`` holds between ``begin`` and ``end`` (ValueError naming ``what`` when they are missing)."""
    if begin not in text or end not in text:
        raise ValueError(f"{what} must sit between {begin!r} and {end!r}")
    return text.split(begin, 1)[1].split(end, 1)[0].strip("\n")


def replaced(text: str, begin: str, end: str, body: str, what: str) -> str:
    """``text`` with ``body`` between its markers."""
    block(text, begin, end, what)
    head, rest = text.split(begin, 1)
    return head + begin + "\n" + body + "\n" + end + rest.split(end, 1)[1]
