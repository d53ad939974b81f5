"""Grading a whole class: from an LMS download to a gradebook, in parallel, locally or in Docker.

May import every layer below it; it uses problem, sandbox, judging, feedback
and report. Only cli.py imports it. Bottom up: ids (student ids, the boundary
for untrusted names), intake (safe zip and folder reading), layouts (which LMS
download, one Entry per student), state (resume records), record_seal (the key
that lets resume trust a record), similarity, runner (one process per
submission, clean kills), local and docker (grading one submission), outputs,
summary and gradebook_files (grades.csv, summary.md), shards (--shard K/N,
batch-merge), api (run_batch), progress (the terminal line), command (the two
commands' arguments).
"""
