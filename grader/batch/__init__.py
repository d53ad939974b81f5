"""Grading a whole class: from an LMS download to a gradebook, in parallel, locally or in Docker.

May import every layer below it; it uses problem, sandbox, judging, feedback
and report. Only cli/ imports it. Bottom up: ids (student ids, the boundary
for untrusted names), intake (the rules every input is read under), zipdir,
zip_intake and folder_intake (safe zip and folder reading), gradescope and
layout_detectors (one detector per LMS layout), layouts (the file chosen,
the Entry), discovery (one Entry per student), writes and state (DIR's files, resume records), record_seal (the key
that lets resume trust a record), similarity, runner (one process per
submission, clean kills), local and docker (grading one submission), grading
(which students to grade, each record as it ends), gradebook, summary and
gradebook_files (grades.csv, summary.md), fit and shards (--shard K/N,
batch-merge), api (run_batch), progress (the terminal line), command (the two
commands' arguments).
"""
