"""Experiments whose results the site draws: one module per topic, results cached on disk."""
