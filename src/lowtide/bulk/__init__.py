"""Bulk runs: many prompts or files, loaded from JSONL or CSV, sent through batches with progress shown as they go."""

from lowtide.bulk.inputs.csv_rows import load_csv, load_csv_stream
from lowtide.bulk.inputs.jobs import (
    FileInfo,
    InputError,
    InputProblem,
    Job,
    file_block,
    inspect_file,
    job_messages,
)
from lowtide.bulk.inputs.jsonl import load_jsonl, load_jsonl_stream
from lowtide.bulk.inputs.parser import check_jobs
from lowtide.bulk.progress.reporters import (
    CallbackReporter,
    MultiReporter,
    NullReporter,
    PlainReporter,
    ProgressCallback,
    ProgressReporter,
    ReporterMode,
    RichReporter,
    RunProgress,
    reporter_for,
)

__all__ = [
    "CallbackReporter",
    "FileInfo",
    "InputError",
    "InputProblem",
    "Job",
    "MultiReporter",
    "NullReporter",
    "PlainReporter",
    "ProgressCallback",
    "ProgressReporter",
    "ReporterMode",
    "RichReporter",
    "RunProgress",
    "check_jobs",
    "file_block",
    "inspect_file",
    "job_messages",
    "load_csv",
    "load_csv_stream",
    "load_jsonl",
    "load_jsonl_stream",
    "reporter_for",
]
